"""The lines with which a broker says, in its own server.log, that it took a log dir offline, stopped, recovered a
segment or rebuilt its indexes: one list for the rehearsal (kafka_ops.rehearse) and the broker lab (kafka_lab.observe,
which checks them against every lab release). Standard library only."""

from __future__ import annotations

import re

# LogManager, ReplicaManager: a log dir taken offline
DIR_FAILURES = (
    re.compile(r"Stopping serving logs in dir (\S+)"),
    re.compile(r"Error while loading log dir (\S+)"),
    re.compile(r"Failed to create or validate data directory (\S+)"),
    re.compile(r"Halting broker because dir (\S+) is offline"),
)
ALL_FAILED = re.compile(r"Shutdown broker because all log dirs in (.+) have failed")
# an ERROR line that ends the process (a FATAL line always does)
FATAL = re.compile(r"Fatal error|fatal fault|fatal exception|Shutdown broker because|Halting broker", re.I)
RECOVERING = re.compile(r"Recovering unflushed segment (\d+)")
REBUILT = re.compile(
    r"(?:Found a corrupted index file|Could not find (?:offset )?index file) corresponding to log file (\S+?),? "
)
RECOVERY_DELETE = re.compile(r"Deleting segments as part of log recovery: (.*)")
