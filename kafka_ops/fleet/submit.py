"""``kafka-ops fleet submit``: ``spark-submit`` of the fleet job from the environment kafka-ops is installed in.

pip's pyspark puts a ``spark-submit`` in the virtualenv's ``bin/`` that finds its ``SPARK_HOME`` with whatever
``python3`` is first on ``PATH`` (``find-spark-home``): outside the activated venv that Python has no pyspark and
spark-submit dies (``/bin/spark-class: No such file or directory``). The pyspark package carries Spark's own
``bin/`` (``pyspark.find_spark_home``): its spark-submit, with ``SPARK_HOME`` set to the package dir, needs
nothing from ``PATH``; the driver runs on this interpreter (``PYSPARK_DRIVER_PYTHON``), which has kafka-ops. The
executors' Python is left to the cluster (or ``--executor-python``), as ``fleet audit`` leaves it.
"""

from __future__ import annotations

import os
import sys

FLEET_COMMANDS = ("audit", "diff")
# spark-submit's options (org.apache.spark.launcher.SparkSubmitOptionParser, Spark 4.x): switches take no value
_SWITCHES = {
    "--verbose",
    "-v",
    "--supervise",
    "--help",
    "-h",
    "--version",
    "--usage-error",
    "--load-spark-defaults",
}
_OPTS = {
    "--class", "--conf", "-c", "--deploy-mode", "--driver-class-path", "--driver-default-class-path",
    "--driver-cores", "--driver-java-options", "--driver-library-path", "--driver-memory", "--executor-memory",
    "--files", "--jars", "--kill", "--master", "--remote", "--name", "--packages", "--exclude-packages",
    "--properties-file", "--extra-properties-file", "--proxy-user", "--py-files", "--repositories", "--status",
    "--total-executor-cores", "--archives", "--executor-cores", "--keytab", "--num-executors", "--principal",
    "--queue",
}  # fmt: skip


class SubmitError(ValueError):
    pass


def spark_home() -> str:
    """``SPARK_HOME`` when set (the operator's Spark), else the pyspark package dir, which has Spark's bin/."""
    try:
        from pyspark.find_spark_home import _find_spark_home
    except ImportError as exc:
        raise SubmitError(
            f"the fleet job needs the spark extra: pip install 'kafka-ops[spark]' ({exc})"
        ) from None
    return _find_spark_home()


def split(args: list[str]) -> tuple[list[str], list[str]]:
    """spark-submit's options, then the fleet command (``audit`` or ``diff``) and its own arguments."""
    i, end = 0, None
    while i < len(args):
        a = args[i]
        if a == "--":
            end, i = i, i + 1
            break
        if not a.startswith("-"):
            break
        name = a.split("=", 1)[0]
        if name not in _SWITCHES and name not in _OPTS:
            import difflib

            close = difflib.get_close_matches(name, sorted(_SWITCHES | _OPTS), n=1)
            raise SubmitError(
                f"no such option: {a}" + (f" (did you mean {close[0]}?)" if close else "")
                + " (spark-submit's options, then audit or diff and theirs)"
            )  # fmt: skip
        i += 1 if name in _SWITCHES or "=" in a else 2
    rest = args[i:]
    if not rest or rest[0] not in FLEET_COMMANDS:
        raise SubmitError(
            f"give the fleet command after spark-submit's options: kafka-ops fleet submit [SPARK-SUBMIT OPTIONS] "
            f"{{{','.join(FLEET_COMMANDS)}}} ARGS (got: {' '.join(rest) or 'nothing'})"
        )
    return args[: end if end is not None else i], rest


def command(args: list[str], env: dict[str, str] | None = None) -> tuple[list[str], dict[str, str]]:
    """The spark-submit command line and environment that run ``kafka-ops fleet ARGS`` as the driver."""
    spark_args, fleet_args = split(args)
    env = dict(os.environ if env is None else env)
    home = spark_home()
    script = os.path.join(home, "bin", "spark-submit")
    if not os.access(script, os.X_OK):
        raise SubmitError(f"{script}: no spark-submit there (SPARK_HOME {home})")
    env["SPARK_HOME"] = home
    env.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)  # the driver imports kafka_ops
    program = os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "__main__.py"
    )  # not imported: the job's
    return [script, *spark_args, program, *fleet_args], env
