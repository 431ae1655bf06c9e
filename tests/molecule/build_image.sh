#!/usr/bin/env bash
# Builds and caches everything the Molecule scenarios need, from Debian's packages and PyPI only (no container
# registry, no Ansible Galaxy are reachable here; see shared/recipes/README.md):
#   - a Debian bookworm root filesystem made by debootstrap, imported into podman as the image
#     localhost/kafka-ops-molecule:bookworm (systemd as PID 1, python3, sshd and Debian's openjdk-17-jre-headless for
#     the real brokers of the kafka_rolling_restart `brokers` scenario; no pip, no package index used by
#     the roles: like a locked-down broker host); root's authorized key is $TB/ssh/id_ed25519, so that Ansible
#     reaches the hosts over real SSH with pipelining (the podman exec connection costs seconds per task);
#   - containers.conf / storage.conf for this machine's quirks (no CAP_SYS_RESOURCE, hybrid cgroups -> runc);
#   - the containers.podman collection (the Molecule podman driver's modules and connection plugin), unzipped
#     from the `ansible` bundle wheel on PyPI;
#   - env.sh, which the pytest wrappers and a developer source before `molecule test`.
# Idempotent and quick when already done (a few seconds). Usage: tests/molecule/build_image.sh [--force]
# Cache folder: $KAFKA_OPS_TESTBED (default /var/cache/kafka-ops/molecule). Needs root, podman, debootstrap.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
TB=${KAFKA_OPS_TESTBED:-/var/cache/kafka-ops/molecule}
IMAGE=localhost/kafka-ops-molecule:bookworm
PACKAGES=systemd,systemd-sysv,dbus,python3,procps,iproute2,openssh-server,openjdk-17-jre-headless
ANSIBLE_BUNDLE=${ANSIBLE_BUNDLE:-"ansible>=12,<13"}   # the bundle that goes with ansible-core 2.19 (Python 3.11)
PY=${PYTHON:-$REPO/.venv/bin/python}
FORCE=${1:-}
log() { printf '[build_image] %s\n' "$*" >&2; }

[ "$(id -u)" = 0 ] || { echo "build_image.sh: needs root (debootstrap, podman with systemd containers)" >&2; exit 2; }
for tool in podman debootstrap runc unzip; do
  command -v $tool >/dev/null || { echo "build_image.sh: $tool is missing: run .ci/setup-molecule.sh" >&2; exit 2; }
done
mkdir -p "$TB"/{home,containers/storage,containers/run,collections,dl,tmp,ssh}
[ -f "$TB/ssh/id_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -C kafka-ops-molecule -f "$TB/ssh/id_ed25519"

cat > "$TB/containers.conf" <<'C'
[containers]
# root here lacks CAP_SYS_RESOURCE: podman's default rlimits (1048576) cannot be set
default_ulimits = ["nofile=10000:10000", "nproc=4096:4096"]
[engine]
# crun refuses this host's hybrid cgroup v1/v2 layout ("cgroups in hybrid mode not supported")
runtime = "runc"
C
cat > "$TB/storage.conf" <<C
[storage]
driver = "overlay"
graphroot = "$TB/containers/storage"
runroot = "$TB/containers/run"
C
cat > "$TB/env.sh" <<C
# source me before running molecule by hand: . $TB/env.sh
export KAFKA_OPS_TESTBED=$TB
export CONTAINERS_CONF=$TB/containers.conf
export CONTAINERS_STORAGE_CONF=$TB/storage.conf
export ANSIBLE_COLLECTIONS_PATH=$TB/collections
export ANSIBLE_HOME=$TB/ansible-home
export TMPDIR=$TB/tmp
C
. "$TB/env.sh"

# 1. collections (containers.podman) from the ansible bundle wheel
if [ ! -f "$TB/collections/ansible_collections/containers/podman/MANIFEST.json" ] || [ "$FORCE" = --force ]; then
  log "downloading the '$ANSIBLE_BUNDLE' wheel for containers.podman"
  rm -rf "$TB/dl"/ansible-*.whl
  "$PY" -m pip download -q --no-deps -d "$TB/dl" "$ANSIBLE_BUNDLE"
  rm -rf "$TB/collections/ansible_collections"
  (cd "$TB/collections" && unzip -q -o "$TB"/dl/ansible-*.whl 'ansible_collections/containers/podman/*')
  rm -f "$TB"/dl/ansible-*.whl
fi

# 2. root filesystem (debootstrap), cached as a tarball
STAMP="debootstrap bookworm minbase $PACKAGES key $(cut -d' ' -f2 "$TB/ssh/id_ed25519.pub")"
if [ ! -f "$TB/rootfs.tar" ] || [ "$(cat "$TB/rootfs.stamp" 2>/dev/null)" != "$STAMP" ] || [ "$FORCE" = --force ]; then
  MIRROR=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
  MIRROR=${MIRROR:-http://deb.debian.org/debian}
  log "debootstrap bookworm from $MIRROR (about a minute)"
  rm -rf "$TB/rootfs"
  debootstrap --variant=minbase --include="$PACKAGES" bookworm "$TB/rootfs" "$MIRROR" >"$TB/debootstrap.log" 2>&1 \
    || { tail -20 "$TB/debootstrap.log" >&2; exit 1; }
  rm -f "$TB"/rootfs/var/cache/apt/archives/*.deb
  # quiet, quick boots: no getty on the console, no timers
  rm -f "$TB"/rootfs/etc/systemd/system/getty.target.wants/* "$TB"/rootfs/etc/systemd/system/timers.target.wants/*
  install -d -m 700 "$TB/rootfs/root/.ssh"
  install -m 600 "$TB/ssh/id_ed25519.pub" "$TB/rootfs/root/.ssh/authorized_keys"
  ln -sf /lib/systemd/system/ssh.service "$TB/rootfs/etc/systemd/system/multi-user.target.wants/ssh.service"
  tar -C "$TB/rootfs" -cf "$TB/rootfs.tar.tmp" . && mv "$TB/rootfs.tar.tmp" "$TB/rootfs.tar"
  rm -rf "$TB/rootfs"
  echo "$STAMP" > "$TB/rootfs.stamp"
  podman rmi "$IMAGE" >/dev/null 2>&1 || true
fi

# 3. the podman image
if ! podman image exists "$IMAGE"; then
  log "podman import -> $IMAGE"
  podman import --change 'CMD ["/sbin/init"]' --change 'STOPSIGNAL SIGRTMIN+3' "$TB/rootfs.tar" "$IMAGE" >/dev/null
fi
log "ready: $IMAGE (cache $TB; . $TB/env.sh)"
