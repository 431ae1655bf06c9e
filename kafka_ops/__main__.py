"""``python -m kafka_ops``: the CLI, run by the interpreter that has kafka-ops (the Ansible roles use the
controller's own, ``ansible_playbook_python``, so no ``kafka-ops`` on PATH is needed)."""

from kafka_ops.cli import main

main()
