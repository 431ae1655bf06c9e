"""Start the node's own Kafka on a copy-on-write view of its log dirs, where nothing it does can matter.

Why util-linux ``unshare`` under ``setpriv --pdeathsig`` rather than code of our own (rehearsal.md §1, §7): one
maintained tool gives every namespace the sandbox needs, and the kernel tears it all down:

* ``--mount --propagation private``: the overlays exist in the sandbox's mount namespace only; the host never
  sees them, and they vanish with the namespace's last process (no unmount step to forget);
* ``--net``: a network namespace whose only interface is loopback, so the broker can never reach the real
  cluster (or anything else) whatever its config names;
* ``--pid --fork --kill-child``: the JVM is the namespace's pid 1; when ``unshare`` dies every process of the
  namespace dies, and ``setpriv --pdeathsig KILL`` kills ``unshare`` when kafka-ops dies (even by SIGKILL).

Each log dir (and the metadata dir) is an overlay mounted on its own path inside the namespace: the real dir the
read-only lower layer, the writes in the scratch's upper layer, thrown away afterwards (never merged back: the
sandbox's metadata records would be a divergent log, rehearsal.md §3).
"""

from __future__ import annotations

import json
import os
import pwd
import re
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kafka_ops.engine.shell import q
from kafka_ops.rehearse.config import SandboxConfig, properties_text
from kafka_ops.rehearse.launch import READY, StartWatch, as_user, java_command, log4j_config, read_new
from kafka_ops.rehearse.loglines import ALL_FAILED as _ALL_FAILED
from kafka_ops.rehearse.loglines import DIR_FAILURES as _DIR_FAILURES
from kafka_ops.rehearse.loglines import FATAL as _FATAL
from kafka_ops.rehearse.scratch import Image
from kafka_ops.rehearse.zkseed import SEED_PY, Seed, kazoo_path

# a dedicated controller logs "Kafka Server started" even as a voter that never wins an election (a voter of a
# 3-voter quorum alone stays Candidate for ever, rehearsal.md §5): it has started when it leads the quorum,
# QuorumController's "Becoming the active controller at epoch {}, next write offset {}." (the 3.7.2 and 4.3.1
# jars' string constant, logged by its ControllerWriteEvent of the claim, QuorumController.java@3.7.2)
ACTIVE = re.compile(r"\] INFO .*Becoming the active controller at epoch \d+")
ACTIVE_AFTER_STARTED_S = 60.0  # a controller that "started" but leads nothing by then never will alone
_ENTRY = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] (TRACE|DEBUG|INFO|WARN|ERROR|FATAL) (.*)$")
_LOADED = re.compile(r"Loaded (\d+) logs in (\d+)ms")
# 2.0-2.5: no count in the total's line (LogManager.loadLogs@2.2.1:384), one line per log (Log.scala@2.2.1:310)
_LOADED_OLD = re.compile(r"Logs loading complete in (\d+) ms\.")
_LOG_LOADED_OLD = re.compile(r"^\[Log partition=[^\]]*\] Completed load of log with ")
READY_MARK = "kafka-ops-sandbox-ready"
_UNSAFE_PATH = re.compile(r"[,:\\\x00-\x1f\x7f]")


class SandboxError(RuntimeError):
    """The sandbox could not be set up (one line naming why)."""


@dataclass
class Outcome:
    broker: str  # starts | exits | hangs (neither ready nor exited: next_start's word)
    reason: str | None = None
    exit_code: int | None = None
    offline: dict[str, str] = field(default_factory=dict)  # log dir -> the line that took it offline
    logs_loaded: int | None = None
    load_ms: int | None = None
    setup_s: float = 0.0
    start_s: float | None = None
    window_s: float = 0.0
    stop_s: float = 0.0
    fatal: list[str] = field(default_factory=list)
    log_text: str = ""  # the broker's log of the rehearsed start (observe.py reads it)
    # the sandbox's view of the dirs at the end of the window, the broker still running (None: it had exited)
    view: Any = None


def kafka_version_of(home: str) -> tuple[int, ...] | None:
    """The Kafka version of a distribution from its ``libs/kafka_<scala>-<version>.jar``."""
    try:
        names = os.listdir(os.path.join(home, "libs"))
    except OSError:
        return None
    for n in names:
        m = re.match(r"^kafka_\d+\.\d+-(\d+)\.(\d+)\.(\d+)\.jar$", n)
        if m:
            return (int(m[1]), int(m[2]), int(m[3]))
    return None


# ZooKeeper 3.4.13 and 3.4.14 (the client of Kafka 2.0-2.3) find a server's host by parsing
# InetSocketAddress.toString() (StaticHostProvider.getHostString, StaticHostProvider.java@release-3.4.13:117), which
# Java 14 changed to "127.0.0.1/<unresolved>:2181" (JDK-8225499): the broker loops on UnresolvedAddressException and
# never reaches any ZooKeeper (../shared/reference/kafka-lab.md §2, measured on 2.0.1-2.3.1; apache/zookeeper#1509).
# 3.4.10 (Kafka 1.1) and 3.5+ (2.4+) have no such parsing
_TOSTRING_ZK_CLIENT = re.compile(r"^zookeeper-3\.4\.1[34]\.jar$")


def java_feature(java: str) -> int | None:
    """The Java feature release of the ``java`` binary (8, 11, 17, ...), None when it cannot be run or read."""
    try:
        out = subprocess.run(
            [java, "-XshowSettings:properties", "-version"], capture_output=True, text=True, timeout=60,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"^\s*java\.specification\.version = (?:1\.)?(\d+)", out.stderr + out.stdout, re.M)
    return int(m[1]) if m else None


def _class_major(jar: str, name: str = "kafka/Kafka.class") -> int | None:
    """The class file major version of ``name`` in ``jar`` (52: Java 8, 55: 11, 61: 17), None if unreadable."""
    import zipfile

    try:
        with zipfile.ZipFile(jar) as z, z.open(name) as f:
            head = f.read(8)
    except (OSError, KeyError, zipfile.BadZipFile):
        return None
    return int.from_bytes(head[6:8], "big") if head[:4] == b"\xca\xfe\xba\xbe" else None


def java_misfit(home: str, java: str) -> str | None:
    """Why the Kafka of ``home`` cannot start on ``java`` (one line), None when nothing known stops it: a broker
    compiled for a newer Java (4.x: Java 17) would end in an UnsupportedClassVersionError, and 2.0-2.3 on Java 14+
    would never reach ZooKeeper; either would read as the broker's outcome, not the tool's."""
    try:
        names = os.listdir(os.path.join(home, "libs"))
    except OSError:
        return None
    zk = next((n for n in names if _TOSTRING_ZK_CLIENT.match(n)), None)
    broker = next((n for n in names if re.match(r"^kafka_\d+\.\d+-[\d.]+\.jar$", n)), None)
    major = _class_major(os.path.join(home, "libs", broker)) if broker else None
    if zk is None and major is None:
        return None
    feature = java_feature(java)
    if feature is None:
        return None
    if major is not None and major - 44 > feature:
        return (
            f"java {java} is Java {feature}: {home}/libs/{broker} is compiled for Java {major - 44} or later "
            "(its kafka.Kafka class); give --java a Java that runs it"
        )
    if zk is None or feature < 14:
        return None
    return (
        f"java {java} is Java {feature}: the ZooKeeper client of {home}/libs ({zk}) cannot connect to any "
        "ZooKeeper on Java 14 or later (StaticHostProvider.getHostString parses InetSocketAddress.toString()); "
        "give --java a Java 8 or 11 (Kafka 2.0-2.3 support Java 8, and 11 from 2.1)"
    )


def _log_config(run: str, version: tuple[int, ...] | None) -> tuple[str, str]:
    """(the -D option, the file) of a log config writing the broker's log into the scratch, never the host's (the
    lab's own config: kafka_ops.rehearse.launch)."""
    name, text, opt = log4j_config(os.path.join(run, "logs", "server.log"), version)
    path = os.path.join(run, name)
    opt = opt.format(path=path)
    with open(path, "w") as f:
        f.write(text)
    return opt, path


def overlaid_dirs(cfg: SandboxConfig) -> list[str]:
    return list(dict.fromkeys(os.path.normpath(d) for d in [*cfg.log_dirs, cfg.metadata_dir]))


def prepare(
    run: str,
    cfg: SandboxConfig,
    kafka_home: str,
    java: str,
    user: str,
    heap: str,
    version: tuple[int, ...] | None,
    cluster_id: str | None = None,
    images: list[Image] | None = None,
    seed: Seed | None = None,
    nofile: tuple[int, int] | None = None,
) -> str:
    """Write the sandbox's layers, config and inner script into ``run``; the script's path. ``cluster_id``:
    meta.properties', seeded into ZooKeeper mode's throwaway ZooKeeper. ``nofile``: the (soft, hard) open-files
    limit of the broker's unit (rehearse.limits), set for the JVM."""
    try:
        pw = pwd.getpwnam(user)
    except KeyError:
        raise SandboxError(f"--broker-user {user}: no such user") from None
    lines = ["set -eu", "ip link set lo up"]
    dirs = overlaid_dirs(cfg)
    # every mount of the namespace read-only but the scratch (its own bind mount) and the overlays mounted after:
    # an overlay sends the writes to its own files to the upper layer, but a link in a log dir leads out of it
    # (a partition dir linked to /elsewhere is loaded and written through); read-only mounts stop that. Per-mount
    # flags: the host's mounts are not changed (the namespace has copies)
    lines.append(f"mount --bind {q(run)} {q(run)}")
    for point in _mount_points():
        if point == run or any(point == x or point.startswith(x + "/") for x in _KERNEL_TREES):
            continue
        lines.append(f"mount -o remount,bind,ro {q(point)}")
    for d in [*dirs, run, kafka_home]:
        if _UNSAFE_PATH.search(d):
            raise SandboxError(
                f"{d!r}: a path with ',', ':', '\\' or control characters cannot be an overlay layer"
            )
    # the real filesystems' free bytes and inodes (scratch.make_images); mount -o loop sets the device's autoclear
    # flag: the kernel detaches it when the namespace's mount goes, however the sandbox ends
    image_of = {}
    for img in images or []:
        lines.append(f"mount -o loop,nosuid,nodev {q(img.path)} {q(img.mount)}")
        lines.append(f"mkdir -m 711 {q(img.mount + '/upper')} && mkdir -m 700 {q(img.mount + '/work')}")
        image_of.update({os.path.normpath(d): img for d in img.dirs})
    for i, d in enumerate(dirs):
        real = os.path.realpath(d)
        try:
            st = os.stat(real)
        except OSError as exc:
            raise SandboxError(
                f"log dir {d}: {exc.strerror}: the rehearsal overlays existing dirs only"
            ) from None
        if not stat.S_ISDIR(st.st_mode):
            raise SandboxError(f"log dir {d} is not a directory")
        if os.statvfs(real).f_flag & os.ST_RDONLY:
            # its real mount is read-only: so it stays in the sandbox (every mount is made read-only there), as the
            # real start will meet it; an overlay would make it writable and the rehearsal too kind
            continue
        img = image_of.get(os.path.normpath(d))
        layers = img.mount if img else run
        upper, work = os.path.join(layers, "upper", str(i)), os.path.join(layers, "work", str(i))
        # the merged dir's root is the upper's root: give it the real dir's owner and mode, else the broker user
        # could not write its checkpoints there (rehearsal.md §1)
        if img:  # made in the sandbox, on the mounted image
            mode = f"{stat.S_IMODE(st.st_mode):o}"
            lines.append(f"mkdir -m 700 {q(upper)} {q(work)} && chown {st.st_uid}:{st.st_gid} {q(upper)} "
                         f"&& chmod {mode} {q(upper)}")  # fmt: skip
        else:
            os.makedirs(upper, 0o700)
            os.makedirs(work, 0o700)
            os.chown(upper, st.st_uid, st.st_gid)
            os.chmod(upper, stat.S_IMODE(st.st_mode))
        # redirect_dir=on: without it overlayfs refuses to rename a dir that exists in the lower layer (EXDEV), and
        # Kafka's renames of partition dirs (-stray, -delete, future dirs) fail where the real start's succeed: a
        # dir holding a stray partition went offline in the sandbox (seen); with it the rename is recorded in the
        # upper layer (Documentation/filesystems/overlayfs.rst, "Renaming directories")
        lines.append(
            f"mount -t overlay overlay -o {q(f'lowerdir={real},upperdir={upper},workdir={work},redirect_dir=on')} {q(real)}"
        )
    if cfg.voters_append is not None:
        _append_lines(lines, run, cfg)
    for n, img in enumerate(images or []):
        # copy up now what Kafka opens read-write (every file of a partition dir, .lock: opened O_RDWR, never
        # written, so their mtimes, which retention reads, stay), then take the image's room down to the real
        # filesystem's free bytes and inodes: the copy-up is the rehearsal's own cost, the rest is what the broker
        # gets, as at the real start
        pad_py = os.path.join(run, "pad.py")  # a file: sh has no quoting for a -c's newlines
        with open(pad_py, "w") as f:
            f.write(_PAD)
        lines.append(
            f"{q(sys.executable)} {q(pad_py)} {q(img.mount)} {img.real_free_bytes} {img.real_free_inodes} "
            f"{q(os.path.join(run, f'fs-{n}.pad.json'))} "
            + " ".join(q(os.path.realpath(d)) for d in img.dirs)
        )
    if os.path.isdir(os.path.join(run, "upper")):
        os.chmod(os.path.join(run, "upper"), 0o711)
    if cfg.drop_quorum_state:  # a whiteout in the upper: the real file stays
        qs = os.path.join(os.path.realpath(cfg.metadata_dir), "__cluster_metadata-0", "quorum-state")
        lines.append(f"rm -f {q(qs)}")
    for sub in ("logs", "tmp"):
        os.mkdir(os.path.join(run, sub), 0o700)
        os.chown(os.path.join(run, sub), pw.pw_uid, pw.pw_gid)
    props = os.path.join(run, "server.properties")
    with open(props, "w", encoding="utf-8") as f:
        f.write(properties_text(cfg.properties))
    os.chmod(props, 0o644)
    _, log_file = _log_config(run, version)
    os.chmod(log_file, 0o644)
    # the lab's command line (kafka_ops.rehearse.launch); everything the JVM writes outside the log dirs goes to
    # the scratch (not the real server.log, /tmp)
    jvm = java_command(
        java, "kafka.Kafka", props, classpath=os.path.join(kafka_home, "libs"), heap=heap, log_config=log_file,
        options=(f"-Xms{heap}", f"-Dkafka.logs.dir={run}/logs", f"-Djava.io.tmpdir={run}/tmp",
                 f"-XX:ErrorFile={run}/logs/hs_err_pid%p.log", "-XX:-HeapDumpOnOutOfMemoryError"),
    )  # fmt: skip
    lines.append(f"cd {q(run + '/tmp')}")
    if cfg.mode == "zookeeper":
        lines += _zookeeper_lines(run, cfg, kafka_home, java, pw, cluster_id, seed)
    # not exec'd: this shell (root) stays the namespace's pid 1. The kernel clears a process's parent-death signal
    # when its uid changes (prctl(2) PR_SET_PDEATHSIG), so a JVM exec'd as pid 1 under setpriv --reuid lost
    # --kill-child's signal and outlived a SIGKILLed kafka-ops (seen in tests/test_rehearse.py); the shell keeps
    # it, and when pid 1 dies the kernel kills every process of the namespace
    if nofile is not None:  # the unit's LimitNOFILE: the root shell sets it, the JVM inherits it
        lines.append(
            # the soft limit first when lowering (never above the hard one), the hard one first when raising
            f"{{ ulimit -Sn {nofile[0]} 2>/dev/null || :; }}; "
            f"ulimit -Hn {nofile[1]} && ulimit -Sn {nofile[0]} || {{ echo 'could not set the open-files limit of "
            f"the unit, {nofile[0]}:{nofile[1]}' >&2; exit 93; }}"
        )
    lines.append(f"echo {READY_MARK}")  # every mount is in place: what follows is the broker's doing
    lines.append(" ".join(q(a) for a in (*as_user(pw.pw_uid, pw.pw_gid), *jvm)) + " &")
    lines.append("wait $!")
    script = os.path.join(run, "inner.sh")
    with open(script, "w") as f:
        f.write("\n".join(lines) + "\n")
    return script


def _append_lines(lines: list[str], run: str, cfg: SandboxConfig) -> None:
    """KIP-853: the control batch making the node its only voter (voters.single_voter_batch), appended to the
    overlay's copy of the metadata log's last segment once the overlays are mounted: the write lands in the upper
    layer, the real segment is the read-only lower one."""
    from kafka_ops.rehearse.voters import APPEND_PY

    app = cfg.voters_append
    assert app is not None
    batch, script = os.path.join(run, "voters.batch"), os.path.join(run, "voters_append.py")
    with open(batch, "wb") as f:
        f.write(app.batch)
    with open(script, "w") as f:
        f.write(APPEND_PY)
    meta = os.path.realpath(cfg.metadata_dir)
    lines.append(
        f"{q(sys.executable)} {q(script)} {q(meta)} {q(app.segment)} {app.size} {q(batch)} || "
        "{ echo 'could not append the single-voter VotersRecord to the metadata log' >&2; exit 92; }"
    )


# takes an image's free bytes and inodes (for a non-root user) down to the real filesystem's: a root-owned filler
_PAD = """import json,os,stat,sys
m,b,i,out=sys.argv[1],int(sys.argv[2]),int(sys.argv[3]),sys.argv[4]
def up(p):
 try:
  if not stat.S_ISREG(os.lstat(p).st_mode):return
  os.close(os.open(p,os.O_RDWR|os.O_NOFOLLOW|os.O_NONBLOCK))
 except OSError as e:print('copy-up',p,e,file=sys.stderr)
for top in sys.argv[5:]:
 up(os.path.join(top,'.lock'))
 for e in os.scandir(top):
  if e.is_dir(follow_symlinks=False):
   for f in os.scandir(e.path):up(f.path)
d=os.path.join(m,'pad');os.mkdir(d,0o700)
v=os.statvfs(m);extra=v.f_bavail*v.f_frsize-b-4096*(1+(max(0,v.f_favail-i)//128))
if extra>0:
 fd=os.open(os.path.join(d,'bytes'),os.O_CREAT|os.O_WRONLY,0o600);os.posix_fallocate(fd,0,extra);os.close(fd)
for k in range(max(0,os.statvfs(m).f_favail-i)):open(os.path.join(d,str(k)),'w').close()
v=os.statvfs(m);json.dump({'free_bytes':v.f_bavail*v.f_frsize,'free_inodes':v.f_favail},open(out,'w'))
"""
_KERNEL_TREES = ("/proc", "/sys", "/dev")  # not where a broker keeps data; /dev's nodes must stay usable


def _mount_points() -> list[str]:
    """The mount points of our namespace (the sandbox's starts as a copy), from /proc/self/mountinfo."""
    out = []
    with open("/proc/self/mountinfo", "rb") as f:
        for line in f:
            fields = line.split(b" ")
            if len(fields) > 4:
                # octal escapes (\040 for a space) as the kernel writes them
                point = re.sub(rb"\\([0-7]{3})", lambda m: bytes([int(m[1], 8)]), fields[4])
                out.append(os.fsdecode(point))
    return list(dict.fromkeys(out))


def _zookeeper_lines(
    run: str,
    cfg: SandboxConfig,
    kafka_home: str,
    java: str,
    pw: pwd.struct_passwd,
    cluster_id: str | None,
    seed: Seed | None = None,
) -> list[str]:
    """A throwaway ZooKeeper from the broker's own jars on the port its config names, seeded with ``/cluster/id``
    from meta.properties (without it the broker makes a new id and exits with InconsistentClusterIdException,
    KafkaServer.scala@3.5.2:225,240,638; rehearsal.md §6). Topic configs and assignments are not seeded (they need
    the real ZooKeeper, read with kazoo: not done yet)."""

    zk_props = os.path.join(run, "zookeeper.properties")
    with open(zk_props, "w") as f:
        f.write(
            f"dataDir={run}/zk\nclientPort={cfg.zk_port}\nclientPortAddress=127.0.0.1\nmaxClientCnxns=0\n"
            "admin.enableServer=false\n"
        )
    os.chmod(zk_props, 0o644)
    os.mkdir(os.path.join(run, "zk"), 0o700)
    os.chown(os.path.join(run, "zk"), pw.pw_uid, pw.pw_gid)
    zk_log = os.path.join(run, "zk-log4j.properties")
    with open(zk_log, "w") as f:
        f.write(
            log4j_config(f"{run}/logs/zookeeper.log", None)[1]
        )  # ZooKeeper logs with log4j 1 (as the lab's)
    os.chmod(zk_log, 0o644)

    def zk_java(main: str, *args: str) -> list[str]:  # as the broker user, the lab's command line (launch)
        return [
            *as_user(pw.pw_uid, pw.pw_gid),
            *java_command(
                java, main, *args, classpath=os.path.join(kafka_home, "libs"), heap="256m", log_config=zk_log,
                options=(f"-Djava.io.tmpdir={run}/tmp",),
            ),
        ]  # fmt: skip

    wait = (
        "import socket,sys,time\nend=time.time()+60\nwhile time.time()<end:\n try:\n"
        f"  s=socket.create_connection(('127.0.0.1',{cfg.zk_port}),1);s.sendall(b'srvr')\n"
        "  if b'Mode:' in s.recv(1024): sys.exit(0)\n except OSError: pass\n time.sleep(0.2)\nsys.exit(1)"
    )
    wait_py = os.path.join(run, "zk-wait.py")  # a file: sh has no $'...' quoting for the newlines of a -c
    with open(wait_py, "w") as f:
        f.write(wait + "\n")
    lines = [
        " ".join(q(a) for a in zk_java("org.apache.zookeeper.server.quorum.QuorumPeerMain", zk_props)) + " &",
        f"{q(sys.executable)} {q(wait_py)} || {{ echo 'the sandbox ZooKeeper did not answer within 60 s' >&2; exit 90; }}",
    ]
    kp = kazoo_path()
    if seed is not None and kp is not None:
        # the real ZooKeeper's nodes for this broker (zkseed.read_real), written with kazoo in one process
        nodes_json, seed_py = os.path.join(run, "zk-seed.json"), os.path.join(run, "zk-seed.py")
        with open(nodes_json, "w") as f:
            json.dump(seed.nodes, f)
        with open(seed_py, "w") as f:
            f.write(SEED_PY)
        lines.append(
            f"PYTHONPATH={q(kp)} {q(sys.executable)} {q(seed_py)} {cfg.zk_port} {q(cfg.zk_chroot)} {q(nodes_json)} "
            f">>{q(run + '/logs/zk-seed.out')} 2>&1 || {{ echo 'could not seed the sandbox ZooKeeper' >&2; exit 91; }}"
        )
        return lines
    nodes: list[tuple[str, str | None]] = []
    path = ""
    for part in [p for p in cfg.zk_chroot.split("/") if p]:
        path += "/" + part
        nodes.append((path, None))
    if cluster_id:
        data = json.dumps(
            {"version": "1", "id": cluster_id}, separators=(",", ":")
        )  # KafkaZkClient's ClusterIdZNode
        nodes += [(cfg.zk_chroot + "/cluster", None), (cfg.zk_chroot + "/cluster/id", data)]
    for node, value in nodes:
        cli = zk_java("org.apache.zookeeper.ZooKeeperMain", "-server", f"127.0.0.1:{cfg.zk_port}", "create", node,
                      *([value] if value else []))  # fmt: skip
        lines.append(" ".join(q(a) for a in cli) + f" >>{q(run + '/logs/zk-seed.out')} 2>&1 || {{ "
                     f"echo 'could not seed the sandbox ZooKeeper with {node}' >&2; exit 91; }}")  # fmt: skip
    return lines


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def _jvm_pid(outer: int) -> int | None:
    """The broker's JVM as the host sees it: the child of the namespace's pid 1 (the inner shell, unshare's child)
    that runs kafka.Kafka (ZooKeeper mode has the sandbox's ZooKeeper beside it)."""
    for init in _children(outer):
        for kid in _children(init):
            try:
                with open(f"/proc/{kid}/cmdline", "rb") as f:
                    if b"\0kafka.Kafka\0" in f.read():
                        return kid
            except OSError:
                continue
    return None


def judge(text: str, dirs: list[str]) -> tuple[dict[str, str], list[str], int | None, int | None]:
    """From the broker's log: offline dirs (with their line), fatal lines, logs loaded and the load's ms."""
    offline: dict[str, str] = {}
    failures: dict[str, str] = {}  # log dir -> the LogDirFailureChannel error about it
    fatal: list[str] = []
    loaded = load_ms = None
    old_logs = 0
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = _ENTRY.match(line)
        if not m:
            continue
        msg = m[3]
        found = [x[1] for rx in _DIR_FAILURES for x in [rx.search(msg)] if x]
        a = _ALL_FAILED.search(msg)
        if a:
            found += [d.strip() for d in a[1].split(",")]
        # the exception that follows the line says why (No space left on device, Read-only file system)
        cause = lines[i + 1].strip() if i + 1 < len(lines) and not _ENTRY.match(lines[i + 1]) else ""
        if "LogDirFailureChannel)" in msg:
            # the I/O error that makes the broker stop serving a dir a moment later ("Error while writing to
            # checkpoint file D/t-0/leader-epoch-checkpoint" + "java.io.IOException: No space left on device")
            for real in dirs:
                if real + "/" in msg or os.path.realpath(real) + "/" in msg:
                    failures.setdefault(real, f"{msg}: {cause}" if cause else msg)
        if not cause and found:
            cause = next((failures[r] for r in dirs if r in failures and any(
                os.path.normpath(x.rstrip(".,")) in (r, os.path.realpath(r)) for x in found)), "")  # fmt: skip
        for d in found:
            d = os.path.normpath(d.rstrip(".,"))
            for real in dirs:
                if d in (real, os.path.realpath(real)):
                    offline.setdefault(real, f"{msg}: {cause}" if cause else msg)
        if m[2] == "FATAL" or (m[2] == "ERROR" and _FATAL.search(msg)):
            nxt = lines[i + 1].strip() if i + 1 < len(lines) and not _ENTRY.match(lines[i + 1]) else ""
            fatal.append(f"{msg}: {nxt}" if nxt else msg)
        x = _LOADED.search(msg)
        if x:
            loaded, load_ms = int(x[1]), int(x[2])
        elif _LOG_LOADED_OLD.search(msg):
            old_logs += 1
        elif x := _LOADED_OLD.search(msg):
            loaded, load_ms = old_logs, int(x[1])
    return offline, fatal, loaded, load_ms


def run(
    run_dir: str,
    script: str,
    dirs: list[str],
    window_s: float,
    start_timeout_s: float,
    progress: Callable[[str], None] | None = None,
    ready: re.Pattern[str] = READY,
) -> Outcome:
    """Start the sandbox, watch the broker until it started and ``window_s`` more passed (or it exited), stop
    it (SIGTERM: a clean shutdown inside the sandbox; SIGKILL after 60 s) and return what it did."""
    say = progress or (lambda _: None)
    began = time.monotonic()
    out = open(os.path.join(run_dir, "sandbox.out"), "wb")
    proc = subprocess.Popen(
        ["setpriv", "--pdeathsig", "KILL", "--", "unshare", "--mount", "--net", "--pid", "--fork",
         "--kill-child=KILL", "--mount-proc", "--propagation", "private", "sh", script],
        stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, cwd=run_dir,
        env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"},
    )  # fmt: skip
    out.close()
    try:
        return _watch(proc, run_dir, dirs, window_s, start_timeout_s, say, began, ready)
    finally:
        if proc.poll() is None:  # interrupted (Ctrl-C, an error): SIGKILL unshare, --kill-child does the rest
            proc.kill()
            proc.wait()


def _watch(
    proc: subprocess.Popen[bytes],
    run_dir: str,
    dirs: list[str],
    window_s: float,
    start_timeout_s: float,
    say: Callable[[str], None],
    began: float,
    ready: re.Pattern[str] = READY,
) -> Outcome:
    log = os.path.join(run_dir, "logs", "server.log")
    watch = StartWatch(log, ready=ready)  # the lab's own watch of a start (kafka_ops.rehearse.launch)
    text = ""
    started_at: float | None = None
    last_note = began
    code: int | None = None
    leaderless: str | None = None  # a controller that started but never became active
    server_up: float | None = None
    while True:
        text = watch.read()
        now = time.monotonic()
        if started_at is None and watch.ready():
            started_at = now
            say(f"started in {now - began:.1f} s; watching it for {window_s:.0f} s")
        code = proc.poll()
        if code is not None:
            break
        if started_at is not None and now - started_at >= window_s:
            break
        if started_at is None and now - began > start_timeout_s:
            say(f"not started within {start_timeout_s:.0f} s: stopping it")
            break
        if started_at is None and ready is not READY:
            # the server is up but not the active controller: give the election its time, then stop it
            if server_up is None and READY.search(text):
                server_up = now
            if server_up is not None and now - server_up > ACTIVE_AFTER_STARTED_S:
                leaderless = (
                    f"started but did not become the active controller within {ACTIVE_AFTER_STARTED_S:.0f} s "
                    "(no 'Becoming the active controller' line: the node is not a voter of its quorum, or one that "
                    "cannot win an election alone)"
                )
                say(f"not the active controller {ACTIVE_AFTER_STARTED_S:.0f} s after its start: stopping it")
                break
        if now - last_note >= 10:
            last_note = now
            say(
                f"starting ({now - began:.0f} s)"
                if started_at is None
                else f"started; {window_s - (now - started_at):.0f} s of the window left"
            )
        time.sleep(0.2)
    watched = time.monotonic()
    exited_by_itself = code is not None
    view = None
    if code is None:
        jvm = _jvm_pid(proc.pid)
        if jvm is not None:
            view = _view(jvm, dirs)
            try:
                os.kill(jvm, signal.SIGTERM)
            except ProcessLookupError:
                pass
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()  # SIGKILL unshare: --kill-child takes the namespace with it
            proc.wait()
    stopped = time.monotonic()
    text = watch.read()
    if exited_by_itself and READY_MARK not in _sandbox_out(run_dir):
        raise SandboxError(f"the sandbox could not be set up (exit {proc.returncode}): {_tail(run_dir)}")
    offline, fatal, loaded, load_ms = judge(text, dirs)
    o_text = text
    o = Outcome("starts" if started_at is not None and not exited_by_itself else "exits")
    if started_at is None and not exited_by_itself:
        o.broker = "hangs"
        o.reason = leaderless or f"neither ready nor exited within {start_timeout_s:.0f} s (stopped)"
    o.exit_code = proc.returncode if exited_by_itself else None
    o.offline, o.fatal, o.logs_loaded, o.load_ms = offline, fatal, loaded, load_ms
    o.log_text = o_text
    o.view = view
    if o.broker == "exits":
        code = proc.returncode
        # the inner shell reports a JVM killed by signal N as 128 + N (and unshare passes it on)
        ended = (
            f"killed by signal {-code}" if code < 0
            else f"killed by signal {code - 128}, exit code {code}" if code > 128
            else f"exit code {code}"
        )  # fmt: skip
        tail = _tail(run_dir)
        o.reason = (
            fatal[0]
            if fatal
            else f"the JVM ended ({ended}) without a fatal line" + (f": {tail}" if tail else "")
        )
    o.start_s = None if started_at is None else round(started_at - began, 2)
    o.window_s = round(watched - started_at, 2) if started_at is not None else 0.0
    o.stop_s = round(stopped - watched, 2)
    return o


def _view(jvm: int, dirs: list[str]) -> Any:
    """The dirs as the running broker sees them (its mount namespace, through /proc/<pid>/root: the overlays as the
    start left them), listed by the lab's own reader (kafka_ops.rehearse.outcome.snapshot: links not followed,
    nothing read), with the paths the broker knows. Taken before the SIGTERM: the inner shell does not outlive the
    JVM long enough to list them after (seen on 3.7.2), and the .log files' sizes and the dirs' names, which is what
    is read from it, do not change at a clean shutdown. None when it cannot be listed (the JVM ended meanwhile)."""
    import dataclasses

    from kafka_ops.rehearse.outcome import snapshot

    root = f"/proc/{jvm}/root"
    try:
        snap = snapshot([root + os.path.realpath(d) for d in dirs], hash_limit=-1, resolve=False)
    except OSError:
        return None
    n = len(root)
    return dataclasses.replace(
        snap, log_dirs=[d[n:] for d in snap.log_dirs], files={p[n:]: st for p, st in snap.files.items()}
    )


def _sandbox_out(run_dir: str) -> str:
    return read_new(os.path.join(run_dir, "sandbox.out"), 0)[0]


def _tail(run_dir: str) -> str | None:
    """The sandbox's own output (unshare, mount, the JVM before log4j) when the broker's log says nothing."""
    lines = [x for x in _sandbox_out(run_dir).splitlines() if x.strip() and x.strip() != READY_MARK]
    return " / ".join(lines[-3:]) if lines else None
