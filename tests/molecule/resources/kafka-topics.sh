#!/bin/sh
# TEST DOUBLE of Kafka's kafka-topics.sh for the Molecule scenarios (no broker exists here): for
# `--describe --under-min-isr-partitions|--at-min-isr-partitions|--under-replicated-partitions` it prints
# /etc/kafka-cli-double/<option without dashes>.txt (partition lines as the real tool prints them), or nothing.
# Every call is appended to /var/log/kafka-cli-double.log so the scenario can see what the role asked.
echo "$0 $*" >> /var/log/kafka-cli-double.log
for a in "$@"; do
  case "$a" in
    --under-min-isr-partitions|--at-min-isr-partitions|--under-replicated-partitions)
      f=/etc/kafka-cli-double/${a#--}.txt; [ -f "$f" ] && cat "$f"; exit 0 ;;
  esac
done
echo "kafka-topics.sh test double: unsupported call" >&2
exit 1
