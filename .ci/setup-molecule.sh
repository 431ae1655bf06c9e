#!/usr/bin/env bash
# System packages for the Molecule scenarios of the Ansible roles (tests/molecule): podman with runc (crun refuses
# this machine's hybrid cgroups), debootstrap to build the test image from Debian's packages, an SSH client.
# Idempotent and quick when already done. The image itself is built and cached by tests/molecule/build_image.sh,
# which the tests run (it needs the project's venv for the containers.podman collection).
set -euo pipefail
need=()
for pair in podman:podman debootstrap:debootstrap runc:runc unzip:unzip ssh:openssh-client ssh-keygen:openssh-client; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || need+=("${pair#*:}")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "setup-molecule: installing ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(printf '%s\n' "${need[@]}" | sort -u) >/dev/null
fi
