"""NodeResourcesBalancedAllocationArgs: types, v1 defaults and validation."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import Any

from pysched.apimachinery import (
    child,
    duplicate,
    get_list,
    index,
    invalid,
)
from pysched.errors import ConfigError
from pysched.framework.pluginargs.common import (
    ResourceSpec,
    args_body,
    decoding,
    default_resources,
    parse_resources,
)
from pysched.lazyclass import dataclass


@dataclass(slots=True)
class NodeResourcesBalancedAllocationArgs:
    resources: list[ResourceSpec] = field(default_factory=default_resources)


def parse_balanced_allocation_args(
        raw: Mapping[str, Any] | None, path: str) -> tuple[NodeResourcesBalancedAllocationArgs, list[ConfigError]]:
    name = "NodeResourcesBalancedAllocation"
    with decoding(name):
        body = args_body(raw, name, ("resources",), path)
        resources = parse_resources(get_list(body, "resources", path), child(path, "resources"))
    errs: list[ConfigError] = []
    seen: set[str] = set()
    for i, res in enumerate(resources):
        p = index(child(path, "resources"), i)
        if res.name in seen:
            errs.append(duplicate(child(p, "name"), res.name))
        seen.add(res.name)
        if res.weight != 1:
            errs.append(invalid(child(p, "weight"), res.weight, "must be 1"))
    return NodeResourcesBalancedAllocationArgs(resources), errs
