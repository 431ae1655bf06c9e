"""QoS audit (seed 004): what entered a topic against what a pipeline wrote out, and a service's own logs of
consumed offsets checked for gaps and rewinds.

* ``identifiers``: where a record's identifier lies (a JSON field of the value, the key, a header, a column);
* ``sinks``: reading a folder of Parquet, Avro (fastavro), JSON or CSV files into Spark;
* ``compare``: the source/sink comparison per time window and partition (missing ranges, duplicates);
* ``logs``: consumer and service log lines (rebalance events, start offsets, consumed ranges);
* ``offsets``: seed 004's state machine over those lines (gaps, rewinds, consumption without assignment).
"""
