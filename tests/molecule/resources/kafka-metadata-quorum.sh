#!/bin/sh
# TEST DOUBLE of Kafka's kafka-metadata-quorum.sh (no broker exists here): `describe --status` prints
# /etc/kafka-cli-double/status.txt (the real tool's "Key: value" lines), or fails as an unreachable cluster would.
echo "$0 $*" >> /var/log/kafka-cli-double.log
f=/etc/kafka-cli-double/status.txt
[ -f "$f" ] && { cat "$f"; exit 0; }
echo "org.apache.kafka.common.errors.TimeoutException: test double has no status" >&2
exit 1
