"""Where a record's identifier lies, on either side of the comparison.

Specs (the same on both sides, applied to whatever columns the side has):

* ``value:PATH`` a field of the JSON value, PATH dotted (``id``, ``meta.log_id``; ``$.`` JSONPath accepted);
* ``value`` the whole value as UTF-8 text;
* ``key`` the record key as UTF-8 text;
* ``header:NAME`` the first header named NAME, as UTF-8 text;
* ``field:NAME`` (or ``column:NAME``) a column of the files (sinks, exports), dotted for nested fields.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

KINDS = ("value", "key", "header", "field")


class IdSpecError(ValueError):
    """A spec that does not parse, or a side that lacks what the spec needs."""


@dataclass(frozen=True, slots=True)
class IdSpec:
    kind: str  # value | key | header | field
    name: str = ""  # JSON path, header name or column name ("" for the whole value / the key)

    def __str__(self) -> str:
        return f"{self.kind}:{self.name}" if self.name else self.kind

    def needs(self) -> str:
        """The column this spec reads."""
        return {"value": "value", "key": "key", "header": "headers"}.get(self.kind, self.name.split(".")[0])


def parse_id_spec(text: str) -> IdSpec:
    kind, _, name = text.strip().partition(":")
    kind = {"column": "field", "json": "value"}.get(kind.lower(), kind.lower())
    if kind not in KINDS:
        raise IdSpecError(f"bad identifier {text!r}: use value:PATH, value, key, header:NAME or field:NAME")
    if kind in ("header", "field") and not name:
        raise IdSpecError(f"bad identifier {text!r}: {kind}: needs a name")
    if kind == "key" and name:
        raise IdSpecError(f"bad identifier {text!r}: key takes no name")
    if kind == "value" and name.startswith("$."):
        name = name[2:]
    return IdSpec(kind, name)


def _text(df: DataFrame, col: str) -> Column:
    """A column as UTF-8 text, whether it is binary (segments) or already a string (exports, CSV)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import BinaryType

    if isinstance(df.schema[col].dataType, BinaryType):
        return F.decode(F.col(col), "UTF-8")
    return F.col(col).cast("string")


def id_column(df: DataFrame, spec: IdSpec) -> Column:
    """The identifier as a string column (null where the record has none)."""
    from pyspark.sql import functions as F

    need = spec.needs()
    if need not in df.columns:
        have = ", ".join(df.columns)
        raise IdSpecError(f"identifier {spec} needs a column {need!r}; the data has: {have}")
    if spec.kind == "key":
        return _text(df, "key")
    if spec.kind == "value":
        text = _text(df, "value")
        return text if not spec.name else F.get_json_object(text, "$." + spec.name)
    if spec.kind == "header":
        first = F.filter(F.col("headers"), lambda h: h["key"] == F.lit(spec.name))[0]
        return F.decode(first["value"], "UTF-8")
    return F.col(spec.name).cast("string")
