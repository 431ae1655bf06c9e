"""The sandbox's copy of server.properties: the listeners moved to loopback, and for KRaft the node made its own
single-voter quorum (../shared/reference/rehearsal.md §3, recipe A). Nothing else is changed.

Why recipe A: a broker-only node loads its logs only in the first metadata publish, which waits for a quorum that
has caught up (``MetadataLoader.java@3.9.1:228-249``, ``BrokerServer.scala@3.9.1:493-511``): restarted as
``broker,controller`` with the voters = itself it serves its own ``__cluster_metadata`` and loads its logs as at a
real start, in one JVM. ZooKeeper mode: the config names the sandbox's own throwaway ZooKeeper (sandbox.py).
KafkaConfig requires a controller's node.id among the voters
(``KafkaConfig.scala@3.9.1:936,958``). A KIP-853 quorum (``controller.quorum.bootstrap.servers``) keeps its voter
set in the metadata log, where config cannot replace it: voters.py makes the node its only voter there, in the
overlay (run.py, sandbox.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from kafka_ops.rehearse.voters import Append

LOOPBACK = "127.0.0.1"
# NAME://host:port, host may be empty (all interfaces), a name, an IPv4 address or a [bracketed] IPv6 one
_LISTENER = re.compile(r"^\s*([A-Za-z0-9_]+)://(\[[^\]]*\]|[^:/\s]*):(\d+)\s*$")


class SandboxConfigError(ValueError):
    """server.properties cannot be rehearsed (one line naming why)."""


@dataclass
class SandboxConfig:
    properties: dict[str, str]
    mode: str  # kraft | zookeeper
    roles: list[str]  # the node's own process.roles
    node_id: int
    metadata_dir: str
    log_dirs: list[str]
    changed: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)  # key -> (was, now)
    drop_quorum_state: bool = False
    zk_port: int | None = None  # ZooKeeper mode: the sandbox's own ZooKeeper, on the port the config names
    zk_chroot: str = ""
    dynamic_quorum: bool = False  # KIP-853: controller.quorum.bootstrap.servers, the voters stored in the log
    # the node's controller listeners in the sandbox (name, host, port): its endpoint in the single-voter
    # VotersRecord of a KIP-853 quorum (voters.py)
    controller_endpoints: list[tuple[str, str, int]] = field(default_factory=list)
    voters_append: Append | None = (
        None  # KIP-853: the voters.Append that run.py makes (None: nothing to append)
    )


def _listeners(key: str, value: str) -> list[tuple[str, str, int]]:
    out = []
    for part in value.split(","):
        if not part.strip():
            continue
        m = _LISTENER.match(part)
        if m is None:
            raise SandboxConfigError(f"{key}: cannot read the listener {part.strip()!r} (NAME://host:port)")
        out.append((m[1], m[2], int(m[3])))
    return out


def _join(listeners: list[tuple[str, str, int]]) -> str:
    return ",".join(f"{name}://{LOOPBACK}:{port}" for name, _, port in listeners)


def sandbox_properties(props: dict[str, str], version: tuple[int, ...] | None) -> SandboxConfig:
    """The properties the rehearsed node runs with."""
    p = dict(props)
    changed: dict[str, tuple[str | None, str | None]] = {}

    def put(key: str, value: str | None) -> None:
        was = p.get(key)
        if was == value:
            return
        changed[key] = (was, value)
        if value is None:
            p.pop(key, None)
        else:
            p[key] = value

    roles = [r.strip() for r in p.get("process.roles", "").split(",") if r.strip()]
    if not roles:
        return _zookeeper_mode(p, changed, put)
    if not set(roles) <= {"broker", "controller"}:
        raise SandboxConfigError(f"process.roles={p['process.roles']}: only broker and controller are roles")
    try:
        node_id = int(p.get("node.id", ""))
    except ValueError:
        raise SandboxConfigError("node.id is missing or not a number") from None
    dynamic = (
        bool(p.get("controller.quorum.bootstrap.servers", "").strip())
        and not p.get("controller.quorum.voters", "").strip()
    )
    names = [n.strip() for n in p.get("controller.listener.names", "").split(",") if n.strip()]
    if not names:
        raise SandboxConfigError("controller.listener.names is missing (KRaft needs it)")
    ctrl = names[0]
    listeners = _listeners("listeners", p.get("listeners", ""))
    if not listeners:
        raise SandboxConfigError("listeners is empty: nothing to move to loopback")
    ports = {port for _, _, port in listeners}
    if "controller" not in roles:
        # the node becomes a combined node with a controller listener of the sandbox's own (recipe A)
        if any(name == ctrl for name, _, _ in listeners):
            raise SandboxConfigError(f"a broker-only node lists the controller listener {ctrl} in listeners")
        port = next(x for x in range(19093, 65536) if x not in ports)
        listeners.append((ctrl, LOOPBACK, port))
        put("process.roles", "broker,controller")
        pmap = [e.strip() for e in p.get("listener.security.protocol.map", "").split(",") if e.strip()]
        if pmap:  # the sandbox's controller listener is PLAINTEXT (nothing else can reach it)
            mapped = [f"{ctrl}:PLAINTEXT" if e.split(":", 1)[0] == ctrl else e for e in pmap]
            if f"{ctrl}:PLAINTEXT" not in mapped:
                mapped.append(f"{ctrl}:PLAINTEXT")
            put("listener.security.protocol.map", ",".join(mapped))
        elif ctrl not in ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"):
            put("listener.security.protocol.map", f"{ctrl}:PLAINTEXT,PLAINTEXT:PLAINTEXT")
    ctrl_port = next((port for name, _, port in listeners if name == ctrl), None)
    if ctrl_port is None:
        raise SandboxConfigError(f"listeners has no {ctrl} listener (controller.listener.names)")
    put("listeners", _join(listeners))
    if p.get("advertised.listeners", "").strip():
        put("advertised.listeners", _join(_listeners("advertised.listeners", p["advertised.listeners"])))
    voters = f"{node_id}@{LOOPBACK}:{ctrl_port}"
    was_voters = p.get("controller.quorum.voters")
    if dynamic:
        # KIP-853: the stored voter set decides, not controller.quorum.voters (voters.py): the sandbox appends a
        # VotersRecord of the node alone in the overlay's metadata log (run.py); the bootstrap servers name the
        # node's own controller listener on loopback
        put("controller.quorum.bootstrap.servers", f"{LOOPBACK}:{ctrl_port}")
    else:
        put("controller.quorum.voters", voters)
        put("controller.quorum.bootstrap.servers", None)
    # QuorumState.initialize up to 3.7 compares the stored voter set with the configured one and throws
    # (raft/.../QuorumState.java@3.7.0:130-134; gone in 3.8.0): without the stored state it starts a new epoch
    # from the log's (rehearsal.md §3: "removed" works on 3.9.1 too)
    drop = not dynamic and was_voters != voters and (version is None or version < (3, 8))
    dirs = [d.strip() for d in p.get("log.dirs", p.get("log.dir", "/tmp/kafka-logs")).split(",") if d.strip()]
    meta = p.get("metadata.log.dir", "").strip() or dirs[0]
    endpoints = [(name, LOOPBACK, port) for name, _, port in listeners if name in names]
    return SandboxConfig(
        p,
        "kraft",
        roles,
        node_id,
        meta,
        dirs,
        changed,
        drop,
        dynamic_quorum=dynamic,
        controller_endpoints=endpoints,
    )


def as_static(cfg: SandboxConfig) -> None:
    """A node configured with ``controller.quorum.bootstrap.servers`` whose metadata log stores no voter set
    (kraft.version 0: a broker may name the quorum by bootstrap servers while the controllers keep static voters):
    the configured voters are the set (VoterSetHistory.lastValue falls back to them, VoterSetHistory.java@3.9:87-91),
    so the static recipe makes it its own voter."""
    ctrl_port = cfg.controller_endpoints[0][2]
    p = cfg.properties
    for key, value in (
        ("controller.quorum.voters", f"{cfg.node_id}@{LOOPBACK}:{ctrl_port}"),
        ("controller.quorum.bootstrap.servers", None),
    ):
        was = cfg.changed[key][0] if key in cfg.changed else p.get(key)
        if value is None:
            p.pop(key, None)
        else:
            p[key] = value
        if was == value:
            cfg.changed.pop(key, None)
        else:
            cfg.changed[key] = (was, value)
    cfg.dynamic_quorum = False


def _zookeeper_mode(
    p: dict[str, str],
    changed: dict[str, tuple[str | None, str | None]],
    put: Callable[[str, str | None], None],
) -> SandboxConfig:
    """ZooKeeper mode: the broker's config as is but its listeners and ``zookeeper.connect``, which names the
    sandbox's own throwaway ZooKeeper on 127.0.0.1 (the first server's port, the chroot kept)."""
    connect = p.get("zookeeper.connect", "").strip()
    if not connect:
        raise SandboxConfigError(
            "neither process.roles (KRaft) nor zookeeper.connect (ZooKeeper mode) is set"
        )
    if p.get("zookeeper.ssl.client.enable", "").strip().lower() == "true":
        raise SandboxConfigError(
            "zookeeper.ssl.client.enable=true is not rehearsed yet (the sandbox's ZooKeeper is plain)"
        )
    servers, _, chroot = connect.partition("/")
    first = servers.split(",")[0].strip()
    port_text = first.rsplit(":", 1)[1] if ":" in first.lstrip("[").split("]")[-1] else "2181"
    if not port_text.isdigit():
        raise SandboxConfigError(f"zookeeper.connect: cannot read the port of {first!r}")
    chroot = "/" + chroot.strip("/") if chroot.strip("/") else ""
    try:
        node_id = int(p.get("broker.id", "-1"))
    except ValueError:
        raise SandboxConfigError("broker.id is not a number") from None
    listeners = _listeners("listeners", p.get("listeners", "")) or [("PLAINTEXT", "", 9092)]
    put("listeners", _join(listeners))
    if p.get("advertised.listeners", "").strip():
        put("advertised.listeners", _join(_listeners("advertised.listeners", p["advertised.listeners"])))
    put("zookeeper.connect", f"{LOOPBACK}:{port_text}{chroot}")
    dirs = [d.strip() for d in p.get("log.dirs", p.get("log.dir", "/tmp/kafka-logs")).split(",") if d.strip()]
    return SandboxConfig(
        p, "zookeeper", [], node_id, dirs[0], dirs, changed, zk_port=int(port_text), zk_chroot=chroot
    )


def _escape(text: str, key: bool) -> str:
    out = []
    for i, c in enumerate(text):
        if c == "\\":
            out.append("\\\\")
        elif c in "\n\r\t\f":
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t", "\f": "\\f"}[c])
        elif (key and c in "=: ") or (key and c in "#!" and i == 0) or (c == " " and i == 0):
            out.append("\\" + c)
        elif ord(c) > 0x7E or ord(c) < 0x20:
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(c)
    return "".join(out)


def properties_text(props: dict[str, str]) -> str:
    """Java properties text that Properties.load reads back as ``props`` (escapes per its grammar)."""
    return "".join(f"{_escape(k, True)}={_escape(v, False)}\n" for k, v in props.items())
