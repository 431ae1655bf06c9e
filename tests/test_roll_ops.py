"""The rolling restart's operator controls (roles/kafka_rolling_restart), run by ansible-playbook on local hosts as
tests/test_roll_order.py runs it: restart only the brokers that changed since their start (or all, forced), a pause
file that holds the roll between brokers, the phase tags (preflight, stop, deploy, start, wait) with the gates
that protect a stop under every selection, the refusal of `serial` and of a play without `any_errors_fatal`, and
reachability through Ansible's own connection.

What runs for real: every task of the role (begin.yml, step.yml, changed.yml, quorum.yml with the shipped
collector, the role's action plugin). What stands in: `systemctl` (a script first on PATH that prints each
host's `systemctl show` from a file beside its unit, so that the broker's start time is the test's), and
`kafka-ops cluster status`/`check` (kafka_ops_command: a script that lists the brokers and answers "may it stop"
yes, or no for the nodes named in a file). Either restart.yml is replaced by a line naming the host, as in
test_roll_order.py, or (the tag tests) restart.yml itself runs with only the actions that need systemd or a
broker replaced by a line naming the task: its tags, conditions, gates, block and rescue are the role's.
"""

from __future__ import annotations

import calendar
import contextlib
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
PLAYBOOK = Path(sys.executable).parent / "ansible-playbook"

FAKE_SYSTEMCTL = """#!/bin/sh
# systemctl show UNIT ...: the host's answer, from the file beside its unit (the test writes it)
[ "$1" = show ] || { echo "fake systemctl: only show" >&2; exit 1; }
cat "$2.show"
"""

FAKE_KAFKA_OPS = """import json, sys
from pathlib import Path
here = Path(sys.argv[0]).parent
args = sys.argv[1:]
brokers = json.loads((here / "brokers.json").read_text())
if args[:2] == ["cluster", "status"]:
    print(json.dumps({"brokers": brokers, "controller": 99, "controller_from": "metadata quorum", "voters": []}))
    sys.exit(0)
node = int(args[args.index("--broker") + 1])
refused = (here / "refuse.txt").read_text().split() if (here / "refuse.txt").exists() else []
if "--after-start" not in args and str(node) in refused:
    print(json.dumps({"summary": f"no: stopping broker {node} now is not safe (1 reason(s))", "attempts": 1,
                      "reasons": [f"CLU001 orders-0 (ISR [{node}, 2], min.insync.replicas=2: 1 left in sync)"]}))
    sys.exit(1)
said = json.loads((here / "said.json").read_text()) if (here / "said.json").exists() else {}  # notes, waived
print(json.dumps({"summary": "yes", "attempts": 1, "reasons": [], **said}))
"""

# restart.yml's actions that need systemd or a broker, replaced by a line naming the task (the tag tests)
STUBBED = ("ansible.builtin.systemd_service", "ansible.builtin.include_role")
STUBBED_INCLUDES = ("wait_start.yml",)


def _utc(t: float) -> str:
    return time.strftime("%a %Y-%m-%d %H:%M:%S UTC", time.gmtime(t))


class Lab:
    """Local broker hosts (each a directory: server.properties, a unit file and its drop-in, an installation's
    bin/ and libs/, a log dir with its clean-shutdown marker, a broker log) and the role copied beside them."""

    def __init__(self, tmp: Path, names: list[str], restart: str = "replaced") -> None:
        if not PLAYBOOK.exists():
            pytest.skip("ansible-core is not installed")
        self.tmp = tmp
        self.names = names
        roles = tmp / "roles"
        for r in ("kafka_common", "kafka_preflight", "kafka_rolling_restart"):
            shutil.copytree(REPO / "roles" / r, roles / r, ignore=shutil.ignore_patterns("molecule"))
        tasks = roles / "kafka_rolling_restart" / "tasks"
        if restart == "replaced":
            (tasks / "restart.yml").write_text(
                "---\n- name: Restart (replaced by the test)\n  ansible.builtin.debug:\n"
                '    msg: "ROLLED {{ inventory_hostname }}"\n'
            )
        else:
            (tasks / "restart.yml").write_text(
                yaml.safe_dump(_stubbed(tasks / "restart.yml"), sort_keys=False)
            )
        bin_dir = tmp / "bin"
        bin_dir.mkdir()
        (bin_dir / "systemctl").write_text(FAKE_SYSTEMCTL)
        (bin_dir / "systemctl").chmod(0o755)
        (bin_dir / "kafka_ops_fake.py").write_text(FAKE_KAFKA_OPS)
        self.hosts: dict[str, dict[str, object]] = {}
        for i, name in enumerate(names, start=1):
            d = tmp / name
            data = d / "data"
            (data / "__cluster_metadata-0").mkdir(parents=True)
            (data / "__cluster_metadata-0" / "quorum-state").write_text(
                json.dumps({"leaderId": 99, "leaderEpoch": 4, "votedId": -1})
            )
            (data / ".kafka_cleanshutdown").write_text("")
            (d / "server.properties").write_text(f"process.roles=broker\nnode.id={i}\nlog.dirs={data}\n")
            (d / "kafka" / "bin").mkdir(parents=True)
            (d / "kafka" / "libs").mkdir()
            (d / "kafka" / "bin" / "kafka-server-start.sh").write_text("#!/bin/sh\n")
            (d / "kafka" / "libs" / "kafka_2.13-3.9.1.jar").write_text("jar")
            (d / "kafka.service").write_text(f"[Service]\nExecStart={d}/kafka/bin/kafka-server-start.sh\n")
            (d / "kafka.service.d").mkdir()
            (d / "kafka.service.d" / "10-stop.conf").write_text("[Service]\nTimeoutStopSec=600\n")
            (d / "server.log").write_text(
                "[2026-11-27 07:26:07,495] INFO [KafkaRaftServer nodeId=1] Kafka Server started"
                " (kafka.server.KafkaRaftServer)\n"
            )
            self.show(name, started=None)
            self.hosts[name] = {
                "ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                "kafka_preflight_python": sys.executable, "kafka_server_properties": str(d / "server.properties"),
                "kafka_systemd_unit": str(d / "kafka.service"), "kafka_broker_log": str(d / "server.log"),
                "kafka_ops_command": [sys.executable, str(bin_dir / "kafka_ops_fake.py")],
                # what the (stubbed) preflight's audit would have said: the broker's log dirs
                "kafka_preflight_report": {"log_dirs": [{"path": str(data)}]},
            }  # fmt: skip
        (bin_dir / "brokers.json").write_text(json.dumps(list(range(1, len(names) + 1))))

    def show(self, name: str, started: float | None) -> None:
        """The host's `systemctl show`: running since `started`, else stopped (MainPID=0, as after a stop)."""
        d = self.tmp / name
        lines = [
            f"MainPID={4000 + len(name) if started is not None else 0}",
            f"ExecMainStartTimestamp={_utc(started) if started is not None else ''}",
            "ActiveState=" + ("active" if started is not None else "inactive"),
            "Result=success", "TimeoutStopUSec=10min", "ExecMainCode=1", "ExecMainStatus=0",
            f"FragmentPath={d / 'kafka.service'}", f"DropInPaths={d / 'kafka.service.d' / '10-stop.conf'}",
            f"ExecStart={{ path={d}/kafka/bin/kafka-server-start.sh ; argv[]={d}/kafka/bin/kafka-server-start.sh"
            f" {d}/server.properties ; ignore_errors=no ; start_time=[n/a] ; stop_time=[n/a] ; pid=0 ; code=(null) ;"
            " status=0/0 }",
            "NeedDaemonReload=no",
        ]  # fmt: skip
        (d / "kafka.service.show").write_text("\n".join(lines) + "\n")

    def play(self, extra: str = "any_errors_fatal: true\n") -> Path:
        path = self.tmp / "play.yml"
        path.write_text(
            "- name: Roll\n  hosts: kafka_brokers\n  gather_facts: false\n" + "".join(f"  {x}\n" for x in extra.splitlines())
            + "  tasks:\n    - name: Roll\n      ansible.builtin.include_role: {name: kafka_rolling_restart}\n"
            "      tags: [always]\n"
        )  # fmt: skip
        return path

    def run(
        self, *args: str, play: Path | None = None, hosts: dict[str, dict[str, object]] | None = None,
        popen: bool = False,
    ) -> subprocess.CompletedProcess[str] | subprocess.Popen[str]:  # fmt: skip
        doc = {"all": {"children": {"kafka_brokers": {"hosts": hosts or self.hosts}}}}
        (self.tmp / "inventory.yml").write_text(yaml.safe_dump(doc, sort_keys=False))
        env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")} | {
            "ANSIBLE_ROLES_PATH": str(self.tmp / "roles"), "ANSIBLE_HOME": str(self.tmp / "ansible-home"),
            "ANSIBLE_NOCOLOR": "1", "ANSIBLE_PIPELINING": "True", "PYTHONUNBUFFERED": "1",
            "PATH": f"{self.tmp / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
        }  # fmt: skip
        argv = [
            str(PLAYBOOK), "-i", str(self.tmp / "inventory.yml"), str(play or self.play()),
            "-e", f"kafka_ops_report_dir={self.tmp / 'reports'}", "-e", "kafka_bootstrap_server=fake:9092",
            "-e", "kafka_rolling_restart_reach_timeout=3", *args,
        ]  # fmt: skip
        if popen:
            return subprocess.Popen(
                argv, cwd=self.tmp, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
            )
        return subprocess.run(argv, cwd=self.tmp, capture_output=True, text=True, env=env, timeout=600)


def _stubbed(path: Path) -> list[dict[str, object]]:
    """restart.yml with the actions that need systemd or a broker replaced by `debug: RAN <task name>`: every
    task keeps its name, tags, conditions and place in the block or its rescue."""
    doc = yaml.safe_load(path.read_text())

    def stub(task: dict[str, object]) -> dict[str, object]:
        for key in ("block", "rescue", "always"):
            if key in task:
                task[key] = [stub(t) for t in task[key]]  # type: ignore[attr-defined]
        action = next((k for k in task if k.startswith("ansible.builtin.")), None)
        inc = task.get("ansible.builtin.include_tasks")
        if action in STUBBED or (isinstance(inc, str) and inc in STUBBED_INCLUDES):
            del task[action]  # type: ignore[arg-type]
            task.pop("vars", None)
            task["ansible.builtin.debug"] = {"msg": f"RAN {task['name']}"}
        return task

    return [stub(t) for t in doc]


def _steps(out: str) -> tuple[list[str], list[str]]:
    return (
        re.findall(r"step \d+/\d+: restarting (\S+) \(node \d+\);", out),
        re.findall(r"step \d+/\d+: skipping (\S+) \(node \d+\):", out),
    )


def _rolled(out: str) -> list[str]:
    return re.findall(r'"msg": "ROLLED (\S+)"', out)


def _out(r: subprocess.CompletedProcess[str]) -> str:
    return r.stdout + r.stderr


# --- restart only what changed ------------------------------------------------------------------------------


@pytest.fixture
def changed_lab(tmp_path: Path) -> Lab:
    """Three brokers started at the same second, after every file was written; then one gets a new
    server.properties line, one a new jar whose mtime is an old one (as a package manager leaves it: only its
    ctime says it is new), and one nothing."""
    lab = Lab(tmp_path, ["conf-1", "same-2", "jar-3"])
    started = math.ceil(time.time())
    for name in lab.names:
        lab.show(name, started=started)
    time.sleep(max(0.0, started + 1.05 - time.time()))  # the changes below come a second after the start
    with (tmp_path / "conf-1" / "server.properties").open("a") as f:
        f.write("num.io.threads=16\n")
    jar = tmp_path / "jar-3" / "kafka" / "libs" / "kafka_2.13-3.9.2.jar"
    jar.write_text("new jar")
    old = calendar.timegm((2026, 1, 1, 0, 0, 0))
    os.utime(jar, (old, old))
    return lab


def test_only_the_changed_brokers_are_restarted_the_others_skipped_saying_why(changed_lab: Lab) -> None:
    r = changed_lab.run("-e", "kafka_rolling_restart_only_changed=true")
    out = _out(r)
    assert r.returncode == 0, out[-4000:]
    restarted, skipped = _steps(out)
    assert (restarted, skipped) == (["conf-1", "jar-3"], ["same-2"]), out[-4000:]
    assert _rolled(out) == ["conf-1", "jar-3"]
    tmp = changed_lab.tmp
    assert re.search(
        rf"conf-1: restart - changed since its start at \w+ [-\d]+ [:\d]+ UTC: {tmp}/conf-1/server.properties",
        out,
    )
    assert "jar-3: restart - changed since its start at" in out
    assert f"{tmp}/jar-3/kafka/libs" in out  # the new jar, seen by its ctime (its mtime is January's)
    assert re.search(
        r"step 2/3: skipping same-2 \(node 2\): nothing changed since its start at [^;]+ \(watched: \d+ path\(s\)",
        out,
    )
    assert "kafka_rolling_restart_force=true restarts it anyway" in out


def test_force_restarts_every_broker(changed_lab: Lab) -> None:
    r = changed_lab.run(
        "-e", "kafka_rolling_restart_only_changed=true", "-e", "kafka_rolling_restart_force=true"
    )
    out = _out(r)
    assert r.returncode == 0, out[-4000:]
    assert _steps(out) == (["conf-1", "same-2", "jar-3"], [])
    assert _rolled(out) == ["conf-1", "same-2", "jar-3"]
    assert "same-2: restart - forced (kafka_rolling_restart_force=true)" in out


def test_by_default_every_broker_is_restarted_as_before(changed_lab: Lab) -> None:
    r = changed_lab.run()
    out = _out(r)
    assert r.returncode == 0, out[-4000:]
    assert _rolled(out) == ["conf-1", "same-2", "jar-3"]
    assert "kafka_rolling_restart_only_changed is false" in out


def test_a_broker_that_is_not_running_or_a_missing_watched_path(tmp_path: Path) -> None:
    """Not running (MainPID=0): restarted. A watched path that does not exist: the roll refuses."""
    lab = Lab(tmp_path, ["down-1", "up-2"])
    lab.show("up-2", started=time.time() + 60)  # started after every file
    r = lab.run("-e", "kafka_rolling_restart_only_changed=true")
    out = _out(r)
    assert r.returncode == 0, out[-4000:]
    assert _steps(out) == (["down-1"], ["up-2"]), out[-4000:]
    assert "down-1: restart - not running, or systemd gives no start time" in out
    r = lab.run(
        "-e",
        '{"kafka_rolling_restart_only_changed": true, "kafka_rolling_restart_watch_paths": ["/nonexistent/jvm.options"]}',
    )
    out = _out(r)
    assert r.returncode != 0
    assert (
        "refusing to roll: /nonexistent/jvm.options (kafka_rolling_restart_watch_paths) does not exist on"
        in out
    )
    assert _rolled(out) == []


# --- the pause file ---------------------------------------------------------------------------------------


def test_a_pause_file_holds_the_roll_between_brokers_until_it_is_removed(tmp_path: Path) -> None:
    lab = Lab(tmp_path, ["brk-1", "brk-2"])
    pause = tmp_path / "PAUSE"
    p = lab.run(
        "-e", f"kafka_rolling_restart_pause_file={pause}", "-e", "kafka_rolling_restart_pause_wait=300",
        "-e", "kafka_rolling_restart_pause_seconds=1", popen=True,
    )  # fmt: skip
    assert isinstance(p, subprocess.Popen)
    lines: list[str] = []
    assert p.stdout is not None
    # the first broker rolls, then the file appears: the roll must wait before the second
    for line in p.stdout:
        lines.append(line)
        if "ROLLED brk-1" in line:
            pause.write_text("held by the test\n")
        if "paused before brk-2:" in line:
            pause.unlink()
    p.wait(timeout=600)
    out = "".join(lines)
    assert p.returncode == 0, out[-4000:]
    assert _rolled(out) == ["brk-1", "brk-2"]
    assert f"paused before brk-2: {pause} exists on the controller; the roll waits up to 300 s" in out
    assert re.search(rf"{pause} removed after \d+ s: the roll goes on", out)
    assert out.index("paused before brk-2") < out.index("removed after") < out.index("ROLLED brk-2")
    assert "Pausing for 1 seconds" in out  # kafka_rolling_restart_pause_seconds, between the two


def test_a_pause_file_left_in_place_stops_the_roll_at_its_deadline_naming_it(tmp_path: Path) -> None:
    lab = Lab(tmp_path, ["brk-1", "brk-2"])
    pause = tmp_path / "PAUSE"
    pause.write_text("")
    r = lab.run("-e", f"kafka_rolling_restart_pause_file={pause}", "-e", "kafka_rolling_restart_pause_wait=2")
    out = _out(r)
    assert r.returncode != 0
    assert _rolled(out) == []
    assert (
        f"kafka_rolling_restart: the roll stopped, paused by {pause} for 2 s (kafka_rolling_restart_pause_wait);"
        f" every broker is running, none is stopped. Remove {pause} and roll again" in out
    )


# --- the play: serial, any_errors_fatal, reachability -------------------------------------------------------


def test_serial_is_refused_before_any_stop(tmp_path: Path) -> None:
    lab = Lab(tmp_path, ["brk-1", "brk-2"])
    r = lab.run(play=lab.play("any_errors_fatal: true\nserial: 1"))
    out = _out(r)
    assert r.returncode != 0
    assert (
        "kafka_rolling_restart: refusing to roll: the play runs in batches (serial: this batch has 1 of 2 hosts)"
        in out
    )
    assert "remove `serial` from the play" in out
    assert _rolled(out) == []


def test_a_play_without_any_errors_fatal_is_refused_before_any_stop(tmp_path: Path) -> None:
    lab = Lab(tmp_path, ["brk-1", "brk-2"])
    r = lab.run(play=lab.play(""))
    out = _out(r)
    assert r.returncode != 0
    assert "kafka_rolling_restart: refusing to roll: the play does not set `any_errors_fatal: true`" in out
    assert _rolled(out) == []


def test_an_unreachable_broker_refuses_the_roll_through_ansibles_own_connection(tmp_path: Path) -> None:
    """wait_for_connection over the host's own connection (here SSH to a port where nothing listens): the same
    refusal as the TCP probe gave, before any stop."""
    lab = Lab(tmp_path, ["brk-1", "brk-2"])
    hosts = dict(lab.hosts)
    hosts["brk-2"] = dict(hosts["brk-2"]) | {
        "ansible_connection": "ssh", "ansible_host": "127.0.0.1", "ansible_port": 1, "ansible_user": "nobody",
        "ansible_ssh_common_args": "-o ConnectTimeout=2 -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null",
    }  # fmt: skip
    r = lab.run(hosts=hosts)
    out = _out(r)
    assert r.returncode != 0
    assert "refusing to roll: brk-2 cannot be reached (" in out, out[-4000:]
    assert "A roll never leaves a broker out silently" in out
    assert _rolled(out) == []


# --- the tags: the role's own restart.yml, only systemd's and the audit's actions replaced --------------------

RAN = re.compile(r'"msg": "RAN ([^"]+)"')


def _ran(out: str) -> list[str]:
    return RAN.findall(out)


ALL_PHASES = [
    "Preflight before the stop", "Stop the broker", "Preflight again, broker stopped (ownership after a remount, seed 000)",
    "Start the broker", "Wait until the broker has loaded its logs and started, or has failed",
]  # fmt: skip


def test_no_tags_run_every_phase(tmp_path: Path) -> None:
    lab = Lab(tmp_path, ["brk-1"], restart="stubbed")
    r = lab.run()
    out = _out(r)
    assert r.returncode == 0, out[-4000:]
    assert _ran(out) == ALL_PHASES
    assert "brk-1 restarted cleanly" in out


def test_what_the_cluster_noted_and_waived_is_shown_with_the_step(tmp_path: Path) -> None:
    """`cluster check` says yes and notes an offline partition with no replica on the broker, and a waived one:
    the operator sees both lines in the roll's output (they were only in the registered JSON), and the broker
    rolls."""
    lab = Lab(tmp_path, ["brk-1"], restart="stubbed")
    note = ("CLU002 1 under-replicated or offline partition(s) with no replica on broker 1 (its stop does not "
            "touch them; --strict-cluster refuses on them): stale-0 (no leader; replicas [6], ISR [6])")  # fmt: skip
    waived = "CLU002 old-events-3 (no leader; replicas [1], ISR [1])"
    (tmp_path / "bin" / "said.json").write_text(json.dumps({"notes": [note], "waived": [waived]}))
    r = lab.run()
    out = _out(r)
    assert r.returncode == 0, out[-4000:]
    assert f'"may stop brk-1 (node 1): yes",\n        "note: {note}",\n        "waived: {waived}"' in out, (
        out[-4000:]
    )
    assert "brk-1 restarted cleanly" in out


def test_nothing_noted_shows_no_line(tmp_path: Path) -> None:
    lab = Lab(tmp_path, ["brk-1"], restart="stubbed")
    r = lab.run()
    out = _out(r)
    assert r.returncode == 0, out[-4000:]
    assert "may stop brk-1" not in out


def test_tags_preflight_runs_the_checks_alone(tmp_path: Path) -> None:
    lab = Lab(tmp_path, ["brk-1", "brk-2"], restart="stubbed")
    (tmp_path / "bin" / "refuse.txt").write_text("")
    r = lab.run("--tags", "preflight")
    out = _out(r)
    assert r.returncode == 0, out[-4000:]
    assert _ran(out) == [ALL_PHASES[0], ALL_PHASES[2]] * 2
    assert "brk-1: the checks before the stop passed; not restarted (the tags select preflight)" in out
    assert "Ask the cluster whether this broker may stop now" in out  # the gate ran too


def test_skip_tags_preflight_keeps_the_can_roll_gate(tmp_path: Path) -> None:
    lab = Lab(tmp_path, ["brk-1", "brk-2"], restart="stubbed")
    (tmp_path / "bin" / "refuse.txt").write_text("1")
    hosts = {n: h | {"kafka_log_dirs": [str(tmp_path / n / "data")]} for n, h in lab.hosts.items()}
    r = lab.run("--skip-tags", "preflight", hosts=hosts)
    out = _out(r)
    assert r.returncode != 0
    assert "refusing to stop brk-1 (node 1): no: stopping broker 1 now is not safe" in out
    assert "Stop the broker" not in _ran(out) and "Preflight before the stop" not in _ran(out)


def test_skip_tags_preflight_keeps_the_clean_shutdown_gate(tmp_path: Path) -> None:
    lab = Lab(tmp_path, ["brk-1", "brk-2"], restart="stubbed")
    (tmp_path / "brk-1" / "data" / ".kafka_cleanshutdown").unlink()  # the stop did not finish its shutdown
    hosts = {n: h | {"kafka_log_dirs": [str(tmp_path / n / "data")]} for n, h in lab.hosts.items()}
    r = lab.run("--skip-tags", "preflight", hosts=hosts)
    out = _out(r)
    assert r.returncode != 0
    assert _ran(out) == ["Stop the broker"]
    assert f"UNCLEAN STOP of brk-1: no .kafka_cleanshutdown in {tmp_path / 'brk-1' / 'data'}" in out
    assert "brk-1 (node 1) IS STOPPED and the roll stopped with it" in out


def test_skip_tags_preflight_without_the_log_dirs_is_refused(tmp_path: Path) -> None:
    lab = Lab(tmp_path, ["brk-1"], restart="stubbed")
    r = lab.run("--skip-tags", "preflight")
    out = _out(r)
    assert r.returncode != 0, out[-3000:]
    assert (
        "refusing to roll: the preflight is skipped (--skip-tags preflight) and kafka_log_dirs is not set for brk-1"
        in out
    ), out[-3000:]
    assert _ran(out) == []


def test_skip_tags_deploy_rolls_without_the_deploy_hook(tmp_path: Path) -> None:
    lab = Lab(tmp_path, ["brk-1"], restart="stubbed")
    hook = tmp_path / "deploy.yml"
    hook.write_text(
        '- name: Deploy (the hook)\n  ansible.builtin.debug: {msg: "DEPLOYED {{ inventory_hostname }}"}\n'
    )
    r = lab.run("--skip-tags", "deploy", "-e", f"kafka_rolling_restart_deploy_tasks={hook}")
    out = _out(r)
    assert r.returncode == 0, out[-4000:]
    assert _ran(out) == ALL_PHASES and "DEPLOYED" not in out


@pytest.mark.parametrize(
    ("args", "selected"),
    [(["--tags", "stop"], "stop"), (["--skip-tags", "start"], "preflight, stop, deploy, wait"),
     (["--tags", "deploy"], "deploy"), (["--skip-tags", "wait"], "preflight, stop, deploy, start")],
)  # fmt: skip
def test_a_tag_selection_that_would_leave_a_broker_stopped_is_refused(
    tmp_path: Path, args: list[str], selected: str
) -> None:
    lab = Lab(tmp_path, ["brk-1"], restart="stubbed")
    r = lab.run(*args)
    out = _out(r)
    assert r.returncode != 0
    assert (
        f"kafka_rolling_restart: refusing to roll: the tags select {selected} of preflight, stop, deploy, start, wait."
        in out
    ), out[-3000:]
    assert _ran(out) == []


# --- the rescue's log tail: the broker user controls the log's path ----------------------------------------

HOSTILE_LOG = {
    # a root-only file's last line would be printed in the play's error and kept on the controller
    "link to a root-only file": "ln -s {secret} {log}",
    # a plain `tail` as root would wait for a writer forever
    "FIFO": "mkfifo {log}",
    # a plain `tail` would read without end, its memory growing
    "link to /dev/zero": "ln -s /dev/zero {log}",
    "character device": "mknod {log} c 1 5",
    # a hard link to the root-only file: no link to refuse, the same inode
    "hard link to a root-only file": "ln {secret} {log}",
}


@pytest.mark.parametrize("kind", list(HOSTILE_LOG))
def test_the_rescue_never_reads_a_hostile_log_as_root(tmp_path: Path, kind: str) -> None:
    """The deploy hook puts something hostile at kafka_broker_log (as the broker user could, between the checks
    and the rescue) and fails: the rescue's tail refuses it unread, says why in one line, and the play ends."""
    if kind == "character device" and os.geteuid() != 0:
        pytest.skip("mknod needs root")
    lab = Lab(tmp_path, ["brk-1"], restart="stubbed")
    (tmp_path / "reports").mkdir()  # the preflight (stubbed here) makes it
    secret = tmp_path / "root-only"
    secret.write_text("line one\nSECRET-ROOT-ONLY-LINE\n")
    secret.chmod(0o600)
    log = tmp_path / "brk-1" / "server.log"
    hook = tmp_path / "deploy.yml"
    hook.write_text(
        "- name: Put something hostile where the broker log was\n  ansible.builtin.command:\n"
        f"    argv: [sh, -c, {json.dumps(f'rm -f {log} && ' + HOSTILE_LOG[kind].format(secret=secret, log=log))}]\n"
        "- name: Fail the deploy\n  ansible.builtin.fail: {msg: the deploy failed}\n"
    )
    p = lab.run("-e", f"kafka_rolling_restart_deploy_tasks={hook}", popen=True)
    assert isinstance(p, subprocess.Popen)
    try:
        out, _ = p.communicate(timeout=180)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert p.returncode != 0, out[-3000:]
    assert "SECRET-ROOT-ONLY-LINE" not in out
    assert "brk-1 (node 1) IS STOPPED and the roll stopped with it" in out, out[-3000:]
    why = {"FIFO": "a FIFO (named pipe), not a regular file: not read",
           "character device": "a character device, not a regular file: not read",
           "hard link to a root-only file": "a file with 2 hard links: not read"}.get(kind, "a symbolic link")  # fmt: skip
    assert f"Its log could not be read: {log}: {why}" in out, out[-3000:]
    kept = list((tmp_path / "reports").rglob("*server.log.tail"))
    assert kept == [], kept


def test_the_rescue_keeps_the_logs_tail_with_its_control_characters_escaped(tmp_path: Path) -> None:
    lab = Lab(tmp_path, ["brk-1"], restart="stubbed")
    (tmp_path / "reports").mkdir()  # the preflight (stubbed here) makes it
    log = tmp_path / "brk-1" / "server.log"
    hook = tmp_path / "deploy.yml"
    hook.write_text(
        "- name: The broker logs a line with a terminal escape\n  ansible.builtin.shell:\n"
        f"    cmd: printf 'ERROR the last line \\033]52;c;cm0gLXJmIC8K\\007 ends\\n' >> {log}\n"
        "- name: Fail the deploy\n  ansible.builtin.fail: {msg: the deploy failed}\n"
    )
    r = lab.run("-e", f"kafka_rolling_restart_deploy_tasks={hook}")
    out = _out(r)
    assert r.returncode != 0
    assert "\x1b" not in out and "\x07" not in out
    assert "(last line: ERROR the last line \\\\e]52;c;cm0gLXJmIC8K\\\\x07 ends)" in out, out[-3000:]
    (kept,) = (tmp_path / "reports").rglob("*server.log.tail")
    assert kept.read_text().splitlines()[-1] == "ERROR the last line \\e]52;c;cm0gLXJmIC8K\\x07 ends"


def test_a_check_run_keeps_no_tail_on_the_controller(tmp_path: Path) -> None:
    lab = Lab(tmp_path, ["brk-1"], restart="stubbed")
    (tmp_path / "reports").mkdir()
    hook = tmp_path / "deploy.yml"
    hook.write_text("- name: Fail the deploy\n  ansible.builtin.fail: {msg: the deploy failed}\n")
    r = lab.run("--check", "-e", f"kafka_rolling_restart_deploy_tasks={hook}")
    out = _out(r)
    assert r.returncode != 0
    assert "The last 50 lines of its log: not kept (--check writes nothing) (last line: " in out, out[-3000:]
    assert list((tmp_path / "reports").rglob("*")) == []


def test_the_collector_runs_isolated_from_python_variables_and_the_user_site(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sitecustomize.py on PYTHONPATH (as the broker user's environment could give a `sudo -u` without env_reset)
    is not run by the collector (`python3 -I -s -`): it would write the collector's output as it likes."""
    lab = Lab(tmp_path, ["brk-1"], restart="stubbed")
    evil = tmp_path / "evil"
    evil.mkdir()
    ran = tmp_path / "ran-in-the-collector"
    (evil / "sitecustomize.py").write_text(
        "import pathlib\n"
        "if b'\\x00-\\x00' in pathlib.Path('/proc/self/cmdline').read_bytes():  # python3 - MODE: the collector\n"
        f"    pathlib.Path({str(ran)!r}).write_text('ran')\n"
    )
    monkeypatch.setenv("PYTHONPATH", str(evil))
    r = lab.run()
    out = _out(r)
    assert r.returncode == 0, out[-3000:]
    assert _ran(out) == ALL_PHASES  # quorum.yml and logstate.yml ran the collector
    assert not ran.exists()


# --- ProxyJump: a broker only a bastion can reach (real sshd in network namespaces) ---------------------------


def _sh(*cmd: str) -> None:
    subprocess.run(cmd, check=True, capture_output=True, text=True)


def _sshd(d: Path, name: str, ns: str, addr: str) -> int:
    hk = d / f"hostkey-{name}"
    _sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(hk))
    conf = d / f"sshd-{name}.conf"
    conf.write_text(
        f"ListenAddress {addr}\nPort 22\nHostKey {hk}\nAuthorizedKeysFile {d}/authorized_keys\nStrictModes no\n"
        f"PermitRootLogin prohibit-password\nPasswordAuthentication no\nUsePAM no\nPidFile {d}/sshd-{name}.pid\n"
        "AllowTcpForwarding yes\n"
    )
    _sh("ip", "netns", "exec", ns, "/usr/sbin/sshd", "-f", str(conf), "-E", str(d / f"sshd-{name}.log"))
    pid_file = d / f"sshd-{name}.pid"
    deadline = time.monotonic() + 10
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return int(pid_file.read_text())


@pytest.fixture
def bastion(tmp_path: Path) -> Iterator[Path]:
    """Two namespaces: a bastion on a veth to this host (10.233.77.2), and a broker on a veth to the bastion only
    (10.234.77.2): this host has no route of its own to the broker (its default route may well answer a TCP probe
    of 10.234.77.2:22 in a sandbox: such a probe proves nothing); each runs sshd; an ssh_config says ProxyJump."""
    if os.geteuid() != 0 or shutil.which("ip") is None or not os.path.exists("/usr/sbin/sshd"):
        pytest.skip("needs root, ip and sshd")
    tag = f"{os.getpid() % 10000}"
    nb, nk, hv, bv = f"kpj{tag}-b", f"kpj{tag}-k", f"kpjh{tag}", f"kpjb{tag}"
    d = tmp_path / "ssh"
    d.mkdir()
    pids: list[int] = []
    try:
        _sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / "id"))
        shutil.copy(d / "id.pub", d / "authorized_keys")
        os.makedirs("/run/sshd", exist_ok=True)
        for ns in (nb, nk):
            _sh("ip", "netns", "add", ns)
            _sh("ip", "-n", ns, "link", "set", "lo", "up")
        _sh("ip", "link", "add", hv, "type", "veth", "peer", "name", "eth0", "netns", nb)
        _sh("ip", "addr", "add", "10.233.77.1/24", "dev", hv)
        _sh("ip", "link", "set", hv, "up")
        _sh("ip", "-n", nb, "addr", "add", "10.233.77.2/24", "dev", "eth0")
        _sh("ip", "-n", nb, "link", "set", "eth0", "up")
        _sh("ip", "-n", nb, "link", "add", bv, "type", "veth", "peer", "name", "eth0", "netns", nk)
        _sh("ip", "-n", nb, "addr", "add", "10.234.77.1/24", "dev", bv)
        _sh("ip", "-n", nb, "link", "set", bv, "up")
        _sh("ip", "-n", nk, "addr", "add", "10.234.77.2/24", "dev", "eth0")
        _sh("ip", "-n", nk, "link", "set", "eth0", "up")
        pids.append(_sshd(d, "bastion", nb, "10.233.77.2"))
        pids.append(_sshd(d, "broker", nk, "10.234.77.2"))
        config = d / "ssh_config"
        config.write_text(
            f"Host *\n  User root\n  IdentityFile {d / 'id'}\n  IdentitiesOnly yes\n  StrictHostKeyChecking no\n"
            "  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n  ConnectTimeout 5\n"
            "Host 10.234.77.*\n  ProxyJump 10.233.77.2\n"
        )
        yield config
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, 15)
        subprocess.run(["ip", "link", "del", hv], capture_output=True)
        for ns in (nb, nk):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def test_a_broker_behind_a_bastion_is_reached_through_proxyjump(tmp_path: Path, bastion: Path) -> None:
    lab = Lab(tmp_path, ["brk-1", "brk-2"])
    hosts = dict(lab.hosts)
    hosts["brk-2"] = dict(hosts["brk-2"]) | {
        "ansible_connection": "ssh", "ansible_host": "10.234.77.2", "ansible_ssh_common_args": f"-F {bastion}",
    }  # fmt: skip
    r = lab.run(hosts=hosts)
    out = _out(r)
    assert r.returncode == 0, out[-4000:]
    assert _rolled(out) == ["brk-1", "brk-2"]
    # brk-2 came through the bastion: its sshd saw the bastion's inner address, not this host's
    assert "Accepted publickey for root from 10.234.77.1 " in (bastion.parent / "sshd-broker.log").read_text()
