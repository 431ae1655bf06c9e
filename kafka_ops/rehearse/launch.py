"""What the broker lab's runner (kafka_lab/broker.py) and the rehearsal's sandbox (sandbox.py) share to start a
broker and know that it started: the log pattern and log config that put its log where we read it, and its ready
line (issue 38, "one way to start a broker": the lab imports these, never the reverse). Standard library only."""

from __future__ import annotations

import os
import re
import stat

LOG_PATTERN = "[%d] %p %m (%c)%n"  # the pattern Kafka ships (config/log4j.properties, log4j2.yaml)
# the line a broker logs once it serves: KafkaRaftServer.startup "Kafka Server started" (3.x/4.x KRaft),
# KafkaServer.startup "[KafkaServer id=N] started" (ZooKeeper mode), "[Kafka Server N], started" (up to 1.x)
READY = re.compile(
    r"\] INFO (?:\[KafkaRaftServer nodeId=\d+\] Kafka Server started"
    r"|\[KafkaServer id=\d+\] started|\[Kafka Server \d+\], started) \(kafka\.server\.Kafka(?:Raft)?Server\)"
)


def log4j_config(log_file: str, version: tuple[int, ...] | None) -> tuple[str, str, str]:
    """(file name, text, the JVM's -D option given the file's path as ``{path}``) of a log config that writes
    everything at INFO to ``log_file`` with LOG_PATTERN: log4j2's properties format from 4.0 (Kafka 4.x ships
    log4j2; this format needs no extra jar), log4j 1's before."""
    if version is not None and version >= (4, 0):
        return (
            "log4j2.properties",
            "status = warn\n"
            "appender.f.type = File\nappender.f.name = F\n"
            f"appender.f.fileName = {log_file}\nappender.f.append = true\n"
            "appender.f.layout.type = PatternLayout\n"
            f"appender.f.layout.pattern = {LOG_PATTERN}\n"
            "rootLogger.level = INFO\nrootLogger.appenderRef.f.ref = F\n",
            "-Dlog4j2.configurationFile={path}",
        )
    return (
        "log4j.properties",
        "log4j.rootLogger=INFO, F\n"
        "log4j.appender.F=org.apache.log4j.FileAppender\n"
        f"log4j.appender.F.File={log_file}\nlog4j.appender.F.Append=true\n"
        "log4j.appender.F.layout=org.apache.log4j.PatternLayout\n"
        f"log4j.appender.F.layout.ConversionPattern={LOG_PATTERN}\n",
        "-Dlog4j.configuration=file:{path}",
    )


def log4j_option(path: str) -> str:
    """The JVM option that makes Kafka read the log config at ``path`` (log4j2's for a log4j2 file)."""
    name = path.rsplit("/", 1)[-1]
    return (
        f"-Dlog4j2.configurationFile={path}"
        if name.startswith("log4j2")
        else f"-Dlog4j.configuration=file:{path}"
    )


def as_user(uid: int | str | None, gid: int | str | None = None, *, pdeathsig: bool = False) -> list[str]:
    """util-linux setpriv: run what follows as ``uid``:``gid`` with its groups (None: as we are), killed with its
    parent when ``pdeathsig`` (the kernel clears that signal when the uid changes: set by the same setpriv, after)."""
    cmd = ["setpriv"]
    if pdeathsig:
        cmd += ["--pdeathsig", "SIGKILL"]
    if uid is not None:
        cmd += [f"--reuid={uid}", f"--regid={gid if gid is not None else uid}", "--init-groups"]
    return [*cmd, "--"]


def java_command(
    java: str, main: str, *args: str, classpath: str, heap: str, log_config: str | None = None,
    options: tuple[str, ...] = (),
) -> list[str]:  # fmt: skip
    """The one java command line that starts a broker, its ZooKeeper or a Kafka tool, for the lab and the
    rehearsal alike: ``java`` with the heap, headless, no hsperfdata file, the log config (log4j_option), the
    caller's ``options`` (the lab's fast-start flags; the sandbox's scratch paths), then ``-cp classpath main
    args``. ``classpath``: a dir of jars (its ``*``)."""
    return [
        java, f"-Xmx{heap}", "-Djava.awt.headless=true", "-XX:-UsePerfData",
        *([log4j_option(log_config)] if log_config else []), *options,
        "-cp", classpath.rstrip("/") + "/*", main, *args,
    ]  # fmt: skip


def read_new(path: str, offset: int) -> tuple[str, int]:
    """The whole lines a log file got past ``offset``, and the offset after them. The log is in a dir the broker
    user writes: opened without following a link, read only when it is a regular file (else nothing)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return "", offset
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return "", offset
        os.lseek(fd, offset, os.SEEK_SET)
        chunks = []
        while True:
            b = os.read(fd, 1 << 20)
            if not b:
                break
            chunks.append(b)
        data = b"".join(chunks)
        cut = data.rfind(b"\n") + 1  # whole lines only
        return data[:cut].decode("utf-8", "replace"), offset + cut
    finally:
        os.close(fd)


class StartWatch:
    """A start watched from its log, for the lab's broker runner and the rehearsal's sandbox alike: the text the
    log got since the start (read as it grows, whole lines), and whether the ready line is in it."""

    def __init__(self, log_file: str, offset: int = 0, ready: re.Pattern[str] = READY) -> None:
        self.log_file, self.offset, self.ready_line = log_file, offset, ready
        self.text = ""

    def read(self) -> str:
        new, self.offset = read_new(self.log_file, self.offset)
        self.text += new
        return self.text

    def ready(self) -> bool:
        return self.ready_line.search(self.text) is not None
