"""``kafka-ops fleet audit``: the audit of a whole fleet of brokers as one PySpark job.

Work units are (host, log dir) pairs from an Ansible inventory or ``--log-dir``; a Spark task audits one host (all
of its log dirs: some checks compare them) by shipping the stdlib collector over SSH (``kafka_ops.fleet.ssh``) or,
for the local host, by running the same modules in-process. The checks are evaluated where the files are; partition
rows and findings stream back, and the fleet view (replicas at risk, per-topic impact, per-host summary) is computed
in Spark from them (``kafka_ops.fleet.view``). Results are kept as Parquet (``kafka_ops.fleet.results``).

Only this package and ``kafka_ops.commands.fleet`` import pyspark, paramiko and ansible (the ``spark`` extra).
"""
