"""Hadoop's S3A connector for the pip-installed pyspark, fetched from Maven Central with Maven and cached.

``hadoop-aws`` of the Hadoop release pyspark ships (``pyspark/jars/hadoop-client-api-<v>.jar``) declares the AWS
SDK v2 ``bundle``: one shaded jar of every AWS service (686 MB for 2.35.4, Hadoop 3.5.0's). S3A needs only the
S3 client, its transfer manager and what they depend on: 13 MB. So ``hadoop-aws`` without the bundle, plus
``software.amazon.awssdk:s3`` and ``s3-transfer-manager`` at the SDK version Hadoop's own build pins (the
``aws-java-sdk-v2.version`` property of ``hadoop-project``, this pom's parent), minus what pyspark already has
(netty, Apache HttpClient, commons-codec and -logging, slf4j). The jars land in
``<cache>/hadoop-<v>/`` (default ``/var/cache/kafka-ops/s3a``, or ``$KAFKA_OPS_S3A_CACHE``); a second call finds
them and runs no Maven. The same set without Maven, through Spark's own resolver (``spark.jars.packages`` and
``spark.jars.excludes``): docs/fleet.md.
"""

from __future__ import annotations

import glob
import os
import re
from pathlib import Path

from kafka_lab.jars import fetch_jars

DEFAULT_CACHE = Path("/var/cache/kafka-ops/s3a")
# on pyspark's classpath already (pyspark/jars): the SDK's copies would shadow or clash with Spark's
_SPARK_HAS = ["io.netty:*", "org.apache.httpcomponents:*", "commons-codec:*", "commons-logging:*", "org.slf4j:*"]  # fmt: skip
_SDK = ["s3", "s3-transfer-manager"]


class S3AError(RuntimeError):
    """The connector could not be fetched (one line, naming what failed)."""


def hadoop_version() -> str:
    """The Hadoop release of the installed pyspark, from the name of its hadoop-client-api jar."""
    import pyspark

    jars = glob.glob(os.path.join(os.path.dirname(pyspark.__file__), "jars", "hadoop-client-api-*.jar"))
    m = re.fullmatch(r"hadoop-client-api-(\d+\.\d+\.\d+)\.jar", os.path.basename(jars[0])) if jars else None
    if m is None:
        raise S3AError(f"no hadoop-client-api-<version>.jar in {os.path.dirname(pyspark.__file__)}/jars")
    return m.group(1)


def pom(hadoop: str) -> str:
    excl = "".join(
        f"<exclusion><groupId>{g}</groupId><artifactId>{a}</artifactId></exclusion>"
        for g, a in (x.split(":") for x in _SPARK_HAS)
    )
    sdk = "\n".join(
        f"    <dependency><groupId>software.amazon.awssdk</groupId><artifactId>{a}</artifactId>"
        f"<version>${{aws-java-sdk-v2.version}}</version><exclusions>{excl}</exclusions></dependency>"
        for a in _SDK
    )
    return f"""<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <parent><groupId>org.apache.hadoop</groupId><artifactId>hadoop-project</artifactId><version>{hadoop}</version>
    <relativePath/></parent>
  <groupId>kafka-ops.fleet</groupId><artifactId>s3a</artifactId><version>{hadoop}</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.hadoop</groupId><artifactId>hadoop-aws</artifactId><version>{hadoop}</version>
      <exclusions><exclusion><groupId>software.amazon.awssdk</groupId><artifactId>bundle</artifactId></exclusion>
      </exclusions></dependency>
{sdk}
  </dependencies>
</project>
"""


def jar_dir(hadoop: str | None = None, cache: Path | None = None) -> Path:
    """The folder holding the S3A jars for ``hadoop`` (default: pyspark's), fetched with Maven on first use."""
    hadoop = hadoop or hadoop_version()
    root = cache or Path(os.environ.get("KAFKA_OPS_S3A_CACHE", DEFAULT_CACHE))
    return fetch_jars(root, f"hadoop-{hadoop}", pom(hadoop), f"hadoop-aws {hadoop}", S3AError)


def jars_conf(hadoop: str | None = None) -> dict[str, str]:
    """``spark.jars``: every jar of :func:`jar_dir` (Spark puts them on the driver's and executors' classpath)."""
    return {"spark.jars": ",".join(sorted(str(p) for p in jar_dir(hadoop).glob("*.jar")))}


def s3a_conf(endpoint: str, access_key: str, secret_key: str, region: str = "us-east-1") -> dict[str, str]:
    """S3A's settings for an S3-compatible server at ``endpoint`` (``http://host:port``): path-style requests
    (``http://host:port/bucket/key``, no bucket subdomain to resolve), no TLS, the region given (else the SDK
    looks for one, EC2's metadata service included)."""
    return {
        f"spark.hadoop.fs.s3a.{k}": v
        for k, v in {
            "endpoint": endpoint, "endpoint.region": region, "path.style.access": "true",
            "connection.ssl.enabled": "false", "access.key": access_key, "secret.key": secret_key,
        }.items()
    }  # fmt: skip
