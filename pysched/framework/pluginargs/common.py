"""What the in-tree plugins' args share: the TypeMeta check, upstream's "decoding args for plugin X" prefix,
resource weights and utilization shapes (``ResourceSpec``, ``UtilizationShapePoint``)."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from pysched.apimachinery import (
    as_mapping,
    check_fields,
    child,
    field_error,
    get_int,
    get_str,
    go_quote,
    index,
    invalid,
    required,
)
from pysched.errors import ConfigError, ConfigErrors
from pysched.lazyclass import dataclass

API_GROUP = "kubescheduler.config.k8s.io"
API_VERSION = f"{API_GROUP}/v1"
MAX_CUSTOM_PRIORITY_SCORE = 10  # upper bound of a UtilizationShapePoint score


@dataclass(slots=True)
class ResourceSpec:
    name: str
    weight: int


@dataclass(slots=True)
class UtilizationShapePoint:
    utilization: int
    score: int


def default_resources() -> list[ResourceSpec]:
    return [ResourceSpec("cpu", 1), ResourceSpec("memory", 1)]


@contextmanager
def decoding(plugin: str) -> Iterator[None]:
    """Decoding errors of plugin args carry upstream's ``decoding args for plugin X:`` prefix."""
    try:
        yield
    except ConfigErrors:
        raise
    except ConfigError as e:
        raise ConfigError(f"decoding args for plugin {plugin}: {e.detail}", field=e.field) from None


def args_body(raw: Mapping[str, Any] | None, plugin: str, fields: Collection[str],
              path: str) -> Mapping[str, Any]:
    """The args mapping, checked for its TypeMeta (apiVersion, kind) and for unknown fields."""
    body = as_mapping(raw, path, f"{plugin}Args")
    api_version = get_str(body, "apiVersion", path)
    kind = get_str(body, "kind", path)
    if api_version and api_version != API_VERSION:
        raise field_error(child(path, "apiVersion"),
                          f"args for plugin {plugin} must be {API_VERSION}, got {go_quote(api_version)}")
    if kind and kind != f"{plugin}Args":
        raise field_error(child(path, "kind"), f"args for plugin {plugin} were not of type {plugin}Args.{API_GROUP}, "
                                               f"got {kind}.{API_GROUP}")
    check_fields(body, {"apiVersion", "kind", *fields}, path)
    return body


def parse_resources(items: list[Any] | None, path: str) -> list[ResourceSpec]:
    """ResourceSpec list with v1 defaulting: empty → cpu+memory; weight 0 (or unset) → 1."""
    if not items:
        return default_resources()
    out = []
    for i, item in enumerate(items):
        p = index(path, i)
        spec = as_mapping(item, p, "ResourceSpec")
        check_fields(spec, ("name", "weight"), p)
        weight = get_int(spec, "weight", p, bits=64) or 1
        out.append(ResourceSpec(get_str(spec, "name", p) or "", weight))
    return out


def parse_shape(items: list[Any] | None, path: str) -> list[UtilizationShapePoint]:
    out = []
    for i, item in enumerate(items or []):
        p = index(path, i)
        point = as_mapping(item, p, "UtilizationShapePoint")
        check_fields(point, ("utilization", "score"), p)
        out.append(UtilizationShapePoint(get_int(point, "utilization", p) or 0, get_int(point, "score", p) or 0))
    return out


def shape_errors(shape: list[UtilizationShapePoint], path: str) -> list[ConfigError]:
    """Upstream ``validateFunctionShape``."""
    if not shape:
        return [required(path, "at least one point must be specified")]
    errs = []
    for i in range(1, len(shape)):
        if shape[i - 1].utilization >= shape[i].utilization:
            errs.append(invalid(child(index(path, i), "utilization"), shape[i].utilization,
                                "values must be sorted in increasing order"))
            break
    for i, point in enumerate(shape):
        if not 0 <= point.utilization <= 100:
            errs.append(invalid(child(index(path, i), "utilization"), point.utilization,
                                "not in valid range [0, 100]"))
        if not 0 <= point.score <= MAX_CUSTOM_PRIORITY_SCORE:
            errs.append(invalid(child(index(path, i), "score"), point.score,
                                f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]"))
    return errs


def shape_json(shape: list[UtilizationShapePoint]) -> list[dict[str, int]]:
    return [{"Utilization": p.utilization, "Score": p.score} for p in shape]


