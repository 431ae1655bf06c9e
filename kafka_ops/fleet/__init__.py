"""``kafka-ops fleet audit``: the audit of a whole fleet of brokers as one PySpark job.

Work units are (host, log dir) pairs from an Ansible inventory or ``--log-dir``; a Spark task audits one host (all
of its log dirs: some checks compare them) by shipping the stdlib collector over SSH (``kafka_ops.fleet.ssh``) or,
for the local host, by running the same modules in-process. The checks are evaluated where the files are; partition
rows and findings stream back; findings, reports and per-host tallies are collected once, and the fleet view
(replicas at risk, per-topic impact, per-host summary) is computed from them on the driver (``kafka_ops.fleet.view``).
Results are kept as Parquet at any URI Spark writes (``kafka_ops.fleet.results``). On a cluster the job ships
kafka-ops and the SSH credentials with itself (``kafka_ops.fleet.shipping``).

Only this package and ``kafka_ops.cli.fleet`` import pyspark, paramiko and ansible (the ``spark`` extra).
"""
