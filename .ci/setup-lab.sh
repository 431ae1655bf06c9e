#!/usr/bin/env bash
# The broker lab (tests/lab) and the loop-mounted data disk test: Java 17 (on the machine), Maven to fetch the
# broker jars from Maven Central, setpriv to run brokers as the unprivileged 'kafka' user, mkfs.ext4/losetup.
# The jars of every lab version are fetched once into /var/cache/kafka-ops/kafka (a second run downloads nothing).
# Idempotent and quick when already installed. CI runs as root.
set -euo pipefail
cd "$(dirname "$0")/.."
need=()
command -v mvn >/dev/null 2>&1 || need+=(maven)
command -v setpriv >/dev/null 2>&1 || need+=(util-linux)
command -v mkfs.ext4 >/dev/null 2>&1 || need+=(e2fsprogs)
command -v losetup >/dev/null 2>&1 || need+=(mount)
command -v java >/dev/null 2>&1 || need+=(openjdk-17-jre-headless)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
id kafka >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin kafka
# fetch the jars now (in parallel), so that a Maven failure is one clear line here, not a test error later
python3 - <<'PY'
import sys
from concurrent.futures import ThreadPoolExecutor
sys.path.insert(0, ".")
from kafka_ops.lab import jars
from kafka_ops.lab.versions import LAB_VERSIONS

with ThreadPoolExecutor(3) as pool:
    for v, d in zip(LAB_VERSIONS, pool.map(jars.jar_dir, LAB_VERSIONS)):
        print(f"setup-lab: Kafka {v} jars in {d}")
PY
