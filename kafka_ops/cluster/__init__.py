"""The running cluster as an input of the gate: facts only the cluster knows (leaders, ISRs, topic configs, the
broker's own view of its log dirs), asked once through kafka-python's admin client with bounded timeouts.

Not shipped to broker hosts: the CLI (and the fleet driver) asks the cluster and hands the facts, as plain data,
to the checks.
"""
