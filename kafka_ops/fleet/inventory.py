"""The fleet's hosts: from an Ansible inventory (the variables the kafka_preflight role reads) or ``--log-dir``.

Inventory variables (shared with the roles, see HELPERS conventions): group ``kafka_brokers``; per host
``ansible_host``, ``ansible_port``, ``ansible_user``, ``ansible_ssh_private_key_file``, ``ansible_connection``
(``local``: audited in the Spark task without SSH), ``kafka_node_id``; group vars ``kafka_broker_user``
(default ``kafka``), ``kafka_log_dirs`` (default: log.dirs of ``kafka_server_properties``),
``kafka_server_properties``, ``kafka_systemd_unit``, ``kafka_version``, ``kafka_expected_mounts``.
Options given on the command line override the inventory's values.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass, replace
from typing import Any

BROKER_GROUP = "kafka_brokers"


@dataclass(frozen=True)
class Target:
    """One host and its log dirs: the (host, log dir) units a Spark task audits together (cross-dir checks)."""

    name: str
    log_dirs: tuple[str, ...] = ()
    address: str | None = None  # None: the host running the task (no SSH)
    port: int = 22
    user: str | None = None
    key_file: str | None = None
    broker_user: str | None = None
    server_properties: str | None = None
    systemd_unit: str | None = None
    kafka_version: str | None = None
    node_id: int | None = None
    expected_mounts: tuple[tuple[str, str], ...] = ()

    @property
    def local(self) -> bool:
        return self.address is None

    def units(self) -> list[tuple[str, str]]:
        return [(self.name, d) for d in self.log_dirs] or [
            (self.name, f"log.dirs of {self.server_properties or '/etc/kafka/server.properties'}")
        ]


class InventoryError(ValueError):
    """A one-line message naming the inventory and what is wrong with it."""


def _plain(value: Any) -> Any:
    """Ansible's tagged str/list/dict subclasses as plain Python values (they must pickle for Spark's JVM)."""
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass").decode("utf-8", "surrogatepass")
    if isinstance(value, dict):
        return {_plain(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, bool | int | float) or value is None:
        return value
    return str(value).encode().decode()


def _template(value: Any, variables: dict[str, Any], loader: Any) -> Any:
    if isinstance(value, str) and "{{" in value:
        from ansible.template import Templar

        value = Templar(loader=loader, variables=variables).template(value)
    return _plain(value)


def read_inventory(path: str, limit: str | None = None) -> list[Target]:
    """The hosts of group ``kafka_brokers`` (or of every group when there is none), in inventory order."""
    if not os.path.exists(path):
        raise InventoryError(f"{path}: no such inventory file or directory")
    from ansible.inventory.manager import InventoryManager
    from ansible.parsing.dataloader import DataLoader
    from ansible.vars.manager import VariableManager

    loader = DataLoader()
    try:
        inv = InventoryManager(loader=loader, sources=[path])
    except Exception as exc:  # ansible raises its own error types
        raise InventoryError(f"{path}: cannot read the inventory: {exc}") from exc
    vm = VariableManager(loader=loader, inventory=inv)
    pattern = BROKER_GROUP if BROKER_GROUP in inv.groups else "all"
    hosts = inv.get_hosts(pattern=pattern)
    if limit:
        wanted = set(limit.split(","))
        hosts = [h for h in hosts if h.name in wanted or any(g.name in wanted for g in h.get_groups())]
    if not hosts:
        raise InventoryError(
            f"{path}: no hosts in group {BROKER_GROUP}" + (f" matching {limit}" if limit else "")
        )
    out = []
    for h in hosts:
        v = vm.get_vars(host=h, include_hostvars=False)

        def get(key: str, default: Any = None, v: dict[str, Any] = v) -> Any:
            return _template(v.get(key, default), v, loader)

        local = get("ansible_connection") == "local"
        dirs = get("kafka_log_dirs") or []
        if isinstance(dirs, str):
            dirs = [d for d in dirs.split(",") if d]
        mounts = get("kafka_expected_mounts") or {}
        try:
            port = int(get("ansible_port", 22))
            node = get("kafka_node_id")
            node_id = int(node) if node not in (None, "") else None
        except (TypeError, ValueError) as exc:
            raise InventoryError(f"{path}: host {h.name}: {exc}") from exc
        out.append(
            Target(
                name=_plain(h.name),
                log_dirs=tuple(str(d) for d in dirs),
                address=None if local else str(get("ansible_host") or h.name),
                port=port,
                user=get("ansible_user"),
                key_file=os.path.expanduser(get("ansible_ssh_private_key_file"))
                if get("ansible_ssh_private_key_file")
                else None,
                broker_user=get("kafka_broker_user", "kafka"),
                server_properties=get("kafka_server_properties"),
                systemd_unit=get("kafka_systemd_unit"),
                kafka_version=str(get("kafka_version")) if get("kafka_version") else None,
                node_id=node_id,
                expected_mounts=tuple(sorted((str(k), str(m)) for k, m in dict(mounts).items())),
            )
        )
    return out


def local_target(log_dirs: list[str], name: str | None = None) -> Target:
    """``--log-dir`` paths of the host running the job."""
    return Target(name=name or socket.gethostname(), log_dirs=tuple(os.path.abspath(d) for d in log_dirs))


def override(targets: list[Target], **cli: Any) -> list[Target]:
    """Command-line values (not None) win over the inventory's."""
    given = {k: v for k, v in cli.items() if v not in (None, (), [])}
    if "log_dirs" in given:
        given["log_dirs"] = tuple(os.path.abspath(d) for d in given["log_dirs"])
    return [replace(t, **given) for t in targets]
