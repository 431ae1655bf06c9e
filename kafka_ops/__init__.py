"""kafka-ops: say what a Kafka broker will do with the files on its disks, before it does it."""

__version__ = "0.1.0"
