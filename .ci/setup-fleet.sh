#!/usr/bin/env bash
# System packages for the fleet tests (issue 5): sshd for the SSH hosts in network namespaces, ip, sudo.
# Idempotent and quick when already installed. CI runs as root.
set -euo pipefail
need=()
command -v /usr/sbin/sshd >/dev/null 2>&1 || need+=(openssh-server)
command -v ip >/dev/null 2>&1 || need+=(iproute2)
command -v sudo >/dev/null 2>&1 || need+=(sudo)
command -v ssh-keygen >/dev/null 2>&1 || need+=(openssh-client)
command -v useradd >/dev/null 2>&1 || need+=(passwd)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
mkdir -p /run/sshd  # sshd's privilege separation dir (the package's service would create it)
