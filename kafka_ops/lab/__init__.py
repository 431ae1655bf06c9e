"""The broker lab: real Kafka brokers from Maven Central's jars, started, faulted and read back by the tests.

Not shipped to broker hosts (it needs Maven and Java 17); the lab tests (tests/lab), the live-cluster tests and
the Molecule images share it:

* :mod:`~kafka_ops.lab.jars`, :mod:`~kafka_ops.lab.versions`: the jars per release, cached;
* :mod:`~kafka_ops.lab.broker`: :class:`~kafka_ops.lab.broker.LabBroker`, one broker (KRaft 3.x/4.x, ZooKeeper
  mode 2.8) run as the system user ``kafka`` when we are root; never outlives its Python process;
* :mod:`~kafka_ops.lab.produce`: topics and records of every producer kind with kafka-python, what was
  acknowledged, and what reads back;
* :mod:`~kafka_ops.lab.faults`: faults planted into a stopped broker's log dirs;
* :mod:`~kafka_ops.lab.observe`: what a start did, in the shape of the model's ``next_start`` prediction;
* :mod:`~kafka_ops.lab.trial`: restore a saved broker, plant, start, observe.

What each version did with each fault: tests/lab/OBSERVED.md.
"""
