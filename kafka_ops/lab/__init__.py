"""The broker lab: real Kafka brokers from Maven Central's jars, started, faulted and read back by the tests.

Not shipped to broker hosts (it needs Maven and Java); the lab tests (tests/lab), the live-cluster tests and the
Molecule images share it.
"""
