#!/usr/bin/env bash
# Headless Chromium for the HTML report's browser test (tests/report): Debian's `chromium` package, driven by
# playwright (from PyPI, in the dev extra) with executable_path=/usr/bin/chromium; Playwright's own browser
# downloads are never used. Idempotent: quick when chromium is already there.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
# another apt user (a parallel setup script) may hold the lock: wait for it rather than fail
apt-get -o DPkg::Lock::Timeout=300 update -qq
apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
chromium --version
