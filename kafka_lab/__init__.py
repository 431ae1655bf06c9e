"""The broker lab: real Kafka brokers from Maven Central's jars, started, faulted and read back by the tests.

A development tool beside the package, not part of it: not in the wheel (pyproject.toml's package discovery
takes ``kafka_ops*`` only) and not shipped to broker hosts (it needs Maven and Java 17). It may import kafka_ops;
kafka_ops never imports it (tests/test_layers.py). Importable from the repository's root (pytest's ``pythonpath``,
``python -m kafka_lab...`` run there, the Molecule scenario's PYTHONPATH). The lab tests (tests/lab), the
live-cluster tests, the Molecule scenarios and benchmarks/bench_dump.py share it:

* :mod:`~kafka_lab.jars`, :mod:`~kafka_lab.versions`: the jars per release, cached;
* :mod:`~kafka_lab.broker`: :class:`~kafka_lab.broker.LabBroker`, one broker (KRaft 3.x/4.x, ZooKeeper
  mode 2.8) run as the system user ``kafka`` when we are root; never outlives its Python process;
* :mod:`~kafka_lab.produce`: topics and records of every producer kind with kafka-python, what was
  acknowledged, and what reads back;
* :mod:`~kafka_lab.faults`: faults planted into a stopped broker's log dirs;
* :mod:`~kafka_lab.observe`: what a start did, in the shape of the model's ``next_start`` prediction;
* :mod:`~kafka_lab.trial`: restore a saved broker, plant, start, observe.

What each version did with each fault: tests/lab/OBSERVED.md.
"""
