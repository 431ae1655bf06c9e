#!/usr/bin/env bash
# A real Python 3.9 for the collector-floor tests (issue 22; tests/test_collector_py39.py): Debian 11 bullseye's
# python3 (3.9, as on Debian 11 and RHEL 9 broker hosts), in a minimal bullseye root filesystem made by debootstrap
# from the Debian mirror /etc/apt/sources.list.d/ names ($KAFKA_OPS_DEBIAN_MIRROR to change it). The tests run
# the shipped collector with its interpreter (and once chrooted). Idempotent: quick (a stat, 0.01 s) when the stamp
# exists; cold build measured at 71 s here (167 MB). Usage: .ci/setup-py39.sh [--force]
# Cache folder: $KAFKA_OPS_PY39_ROOT (default /var/cache/kafka-ops/bullseye-py39). Needs root and debootstrap.
set -euo pipefail
ROOT=${KAFKA_OPS_PY39_ROOT:-/var/cache/kafka-ops/bullseye-py39}
MIRROR=${KAFKA_OPS_DEBIAN_MIRROR:-http://deb.debian.org/debian}
FORCE=${1:-}
if [ -f "$ROOT.stamp" ] && [ "$FORCE" != --force ] && [ -x "$ROOT/usr/bin/python3" ]; then
  exit 0
fi
[ "$(id -u)" = 0 ] || { echo "setup-py39: needs root (debootstrap, chroot)" >&2; exit 2; }
if ! command -v debootstrap >/dev/null 2>&1; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
fi
rm -rf "$ROOT" "$ROOT.stamp" "$ROOT.tmp"
mkdir -p "$(dirname "$ROOT")"
start=$(date +%s)
echo "setup-py39: debootstrap bullseye (python3) into $ROOT from $MIRROR" >&2
if ! debootstrap --variant=minbase --include=python3 bullseye "$ROOT.tmp" "$MIRROR" >"$ROOT.log" 2>&1; then
  echo "setup-py39: debootstrap failed, last lines of $ROOT.log:" >&2
  tail -n 5 "$ROOT.log" >&2
  exit 2
fi
rm -rf "$ROOT.tmp/var/cache/apt/archives/"*.deb "$ROOT.tmp/var/lib/apt/lists/"*
chroot "$ROOT.tmp" /usr/bin/python3 -c 'import sys; assert sys.version_info[:2] == (3, 9), sys.version'
mv "$ROOT.tmp" "$ROOT"
printf '%s built in %s s: %s\n' "$(date -u +%FT%TZ)" "$(( $(date +%s) - start ))" \
  "$(chroot "$ROOT" /usr/bin/python3 -V 2>&1)" >"$ROOT.stamp"
cat "$ROOT.stamp" >&2
