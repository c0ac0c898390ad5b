"""NodeResourcesFitArgs: types, v1 defaults and validation (upstream types_pluginargs.go,
v1/defaults.go, validation_pluginargs.go for NodeResourcesFit)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import Any

from pysched.apimachinery import (
    as_mapping,
    check_fields,
    child,
    get_list,
    get_str,
    get_str_list,
    index,
    invalid,
    label_name_errors,
    not_supported,
    required,
)
from pysched.errors import ConfigError
from pysched.framework.pluginargs.common import (
    ResourceSpec,
    UtilizationShapePoint,
    args_body,
    decoding,
    default_resources,
    parse_resources,
    parse_shape,
    shape_errors,
)
from pysched.lazyclass import dataclass


@dataclass(slots=True)
class ScoringStrategy:
    type: str = "LeastAllocated"
    resources: list[ResourceSpec] = field(default_factory=default_resources)
    # requestedToCapacityRatio.shape; empty unless type is RequestedToCapacityRatio
    shape: list[UtilizationShapePoint] = field(default_factory=list)


@dataclass(slots=True)
class NodeResourcesFitArgs:
    ignored_resources: list[str] = field(default_factory=list)
    ignored_resource_groups: list[str] = field(default_factory=list)
    scoring_strategy: ScoringStrategy = field(default_factory=ScoringStrategy)


SCORING_STRATEGY_TYPES = ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")


def _parse_scoring_strategy(raw: Any, path: str) -> tuple[ScoringStrategy, list[ConfigError]]:
    if raw is None:
        return ScoringStrategy(), []
    body = as_mapping(raw, path, "ScoringStrategy")
    check_fields(body, ("type", "resources", "requestedToCapacityRatio"), path)
    kind = get_str(body, "type", path) or ""
    resources = parse_resources(get_list(body, "resources", path), child(path, "resources"))
    rtcr_raw = body.get("requestedToCapacityRatio")
    shape: list[UtilizationShapePoint] = []
    errs: list[ConfigError] = []
    if kind not in SCORING_STRATEGY_TYPES:
        errs.append(not_supported(child(path, "type"), kind, SCORING_STRATEGY_TYPES))
    for i, res in enumerate(resources):
        if not 0 < res.weight <= 100:
            errs.append(invalid(child(index(child(path, "resources"), i), "weight"), res.weight,
                                f"resource weight of {res.name} not in valid range (0, 100]"))
    if rtcr_raw is not None:
        rtcr_path = child(path, "requestedToCapacityRatio")
        rtcr = as_mapping(rtcr_raw, rtcr_path, "RequestedToCapacityRatioParam")
        check_fields(rtcr, ("shape",), rtcr_path)
        shape = parse_shape(get_list(rtcr, "shape", rtcr_path), child(rtcr_path, "shape"))
        errs.extend(shape_errors(shape, child(path, "shape")))  # upstream reports scoringStrategy.shape
    elif kind == "RequestedToCapacityRatio":
        # upstream dereferences the missing parameter and crashes; report it like an empty shape
        errs.append(required(child(path, "shape"), "at least one point must be specified"))
    if kind != "RequestedToCapacityRatio":
        shape = []
    return ScoringStrategy(kind, resources, shape), errs


def parse_node_resources_fit_args(raw: Mapping[str, Any] | None,
                                  path: str) -> tuple[NodeResourcesFitArgs, list[ConfigError]]:
    """Decode and default; validation errors are returned, decoding errors raised."""
    name = "NodeResourcesFit"
    with decoding(name):
        body = args_body(raw, name, ("ignoredResources", "ignoredResourceGroups", "scoringStrategy"), path)
        ignored = get_str_list(body, "ignoredResources", path) or []
        groups = get_str_list(body, "ignoredResourceGroups", path) or []
        strategy, errs = _parse_scoring_strategy(body.get("scoringStrategy"), child(path, "scoringStrategy"))
    pre: list[ConfigError] = []
    for i, res in enumerate(ignored):
        pre.extend(label_name_errors(res, index(child(path, "ignoredResources"), i)))
    for i, group in enumerate(groups):
        p = index(child(path, "ignoredResourceGroups"), i)
        if "/" in group:
            pre.append(invalid(p, group, "resource group name can't contain '/'"))
        pre.extend(label_name_errors(group, p))
    return NodeResourcesFitArgs(ignored, groups, strategy), pre + errs
