"""VolumeBindingArgs: types, v1 defaults and validation (StorageCapacityScoring is alpha and
off in v1.34: a shape is refused)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import Any

from pysched.apimachinery import (
    child,
    get_int,
    get_list,
    invalid,
)
from pysched.errors import ConfigError
from pysched.framework.pluginargs.common import (
    UtilizationShapePoint,
    args_body,
    decoding,
    parse_shape,
    shape_json,
)
from pysched.lazyclass import dataclass


@dataclass(slots=True)
class VolumeBindingArgs:
    bind_timeout_seconds: int = 600
    shape: list[UtilizationShapePoint] = field(default_factory=list)


def parse_volume_binding_args(raw: Mapping[str, Any] | None,
                              path: str) -> tuple[VolumeBindingArgs, list[ConfigError]]:
    name = "VolumeBinding"
    with decoding(name):
        body = args_body(raw, name, ("bindTimeoutSeconds", "shape"), path)
        timeout = get_int(body, "bindTimeoutSeconds", path, bits=64)
        shape_raw = get_list(body, "shape", path)
        shape = parse_shape(shape_raw, child(path, "shape"))
    timeout = 600 if timeout is None else timeout
    errs = []
    if timeout < 0:
        errs.append(invalid(child(path, "bindTimeoutSeconds"), timeout,
                            "invalid BindTimeoutSeconds, should not be a negative value"))
    if shape_raw is not None:
        errs.append(invalid(child(path, "shape"), shape_json(shape),
                            "unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring"))
    return VolumeBindingArgs(timeout, shape), errs
