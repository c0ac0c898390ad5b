"""DynamicResourcesArgs: types, defaults and validation (DRASchedulerFilterTimeout is beta and
on in v1.34)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pysched.apimachinery import (
    child,
    format_go_duration,
    get_duration,
    invalid,
)
from pysched.errors import ConfigError
from pysched.framework.pluginargs.common import args_body, decoding
from pysched.lazyclass import dataclass

DEFAULT_FILTER_TIMEOUT_SECONDS = 10.0


@dataclass(slots=True)
class DynamicResourcesArgs:
    filter_timeout_seconds: float = DEFAULT_FILTER_TIMEOUT_SECONDS


def parse_dynamic_resources_args(raw: Mapping[str, Any] | None,
                                 path: str) -> tuple[DynamicResourcesArgs, list[ConfigError]]:
    name = "DynamicResources"
    with decoding(name):
        body = args_body(raw, name, ("filterTimeout",), path)
        ns = get_duration(body, "filterTimeout", path)
    if ns is None:
        return DynamicResourcesArgs(), []
    errs = []
    if ns < 0:
        errs.append(invalid(child(path, "filterTimeout"), format_go_duration(ns), "must be zero or positive"))
    return DynamicResourcesArgs(ns / 1e9), errs
