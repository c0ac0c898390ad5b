"""Typed arguments of the in-tree plugins: strict decoding, v1 defaulting and kube-scheduler validation.

Every ``decode_*`` function takes the raw ``args`` mapping of a ``pluginConfig`` entry (``None`` → all
defaults) and the field path of that mapping (e.g. ``profiles[0].pluginConfig[1].args``), and returns
the typed args or raises ``ConfigError``. Validation messages reproduce kube-scheduler's field errors
(``<path>: Invalid value: 101: not in valid range [0, 100]``): ``ConfigError.field`` holds the path and
``ConfigError.detail`` the text after it. Several validation errors are raised together as
``ConfigErrors`` (upstream aggregates them); decoding errors (unknown field, wrong type) stop at once.

The strict-decoding, field-error, duration and name-validation helpers are ``pysched.apimachinery``'s.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from pysched.apimachinery import (  # re-exported: configuration and extender decoding use them as pa.*
    INT32_RANGE as INT32_RANGE,
    INT64_RANGE as INT64_RANGE,
    as_list as as_list,
    as_mapping as as_mapping,
    check_fields as check_fields,
    child as child,
    did_you_mean as did_you_mean,
    dns1123_subdomain_errors as dns1123_subdomain_errors,
    duplicate as duplicate,
    field_error as field_error,
    flatten as flatten,
    forbidden as forbidden,
    format_go_duration as format_go_duration,
    get_bool as get_bool,
    get_duration as get_duration,
    get_float as get_float,
    get_int as get_int,
    get_list as get_list,
    get_str as get_str,
    get_str_list as get_str_list,
    go_quote as go_quote,
    go_value as go_value,
    index as index,
    invalid as invalid,
    json_type as json_type,
    label_name_errors as label_name_errors,
    label_value_errors as label_value_errors,
    not_supported as not_supported,
    parse_go_duration as parse_go_duration,
    plain as plain,
    qualified_name_errors as qualified_name_errors,
    raise_all as raise_all,
    regex_error as regex_error,
    required as required,
)
from pysched.errors import ConfigError, ConfigErrors

API_GROUP = "kubescheduler.config.k8s.io"
API_VERSION = f"{API_GROUP}/v1"
MAX_CUSTOM_PRIORITY_SCORE = 10  # upper bound of a UtilizationShapePoint score
DEFAULT_FILTER_TIMEOUT_SECONDS = 10.0  # DRASchedulerFilterTimeout is beta and on in v1.34



# --------------------------------------------------------------------------------------------------
# The typed args (field names are shared with the plugins)


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


@dataclass(slots=True)
class NodeResourcesBalancedAllocationArgs:
    resources: list[ResourceSpec] = field(default_factory=default_resources)


@dataclass(slots=True)
class InterPodAffinityArgs:
    hard_pod_affinity_weight: int = 1
    ignore_preferred_terms_of_existing_pods: bool = False


@dataclass(slots=True)
class PodTopologySpreadArgs:
    default_constraints: list[dict] = field(default_factory=list)  # raw v1 TopologySpreadConstraints
    defaulting_type: str = "System"


@dataclass(slots=True)
class NodeAffinityArgs:
    added_affinity: dict | None = None  # raw v1 NodeAffinity


@dataclass(slots=True)
class DefaultPreemptionArgs:
    min_candidate_nodes_percentage: int = 10
    min_candidate_nodes_absolute: int = 100


@dataclass(slots=True)
class VolumeBindingArgs:
    bind_timeout_seconds: int = 600
    shape: list[UtilizationShapePoint] = field(default_factory=list)


@dataclass(slots=True)
class DynamicResourcesArgs:
    filter_timeout_seconds: float = DEFAULT_FILTER_TIMEOUT_SECONDS


# --------------------------------------------------------------------------------------------------
# Shared pieces of decoding


@contextmanager
def _decoding(plugin: str) -> Iterator[None]:
    """Decoding errors of plugin args carry upstream's ``decoding args for plugin X:`` prefix."""
    try:
        yield
    except ConfigErrors:
        raise
    except ConfigError as e:
        raise ConfigError(f"decoding args for plugin {plugin}: {e.detail}", field=e.field) from None


def _args_body(raw: Mapping[str, Any] | None, plugin: str, fields: Collection[str],
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


def _parse_resources(items: list[Any] | None, path: str) -> list[ResourceSpec]:
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


def _parse_shape(items: list[Any] | None, path: str) -> list[UtilizationShapePoint]:
    out = []
    for i, item in enumerate(items or []):
        p = index(path, i)
        point = as_mapping(item, p, "UtilizationShapePoint")
        check_fields(point, ("utilization", "score"), p)
        out.append(UtilizationShapePoint(get_int(point, "utilization", p) or 0, get_int(point, "score", p) or 0))
    return out


def _shape_errors(shape: list[UtilizationShapePoint], path: str) -> list[ConfigError]:
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


def _shape_json(shape: list[UtilizationShapePoint]) -> list[dict[str, int]]:
    return [{"Utilization": p.utilization, "Score": p.score} for p in shape]


# --------------------------------------------------------------------------------------------------
# NodeResourcesFit

SCORING_STRATEGY_TYPES = ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")


def _parse_scoring_strategy(raw: Any, path: str) -> tuple[ScoringStrategy, list[ConfigError]]:
    if raw is None:
        return ScoringStrategy(), []
    body = as_mapping(raw, path, "ScoringStrategy")
    check_fields(body, ("type", "resources", "requestedToCapacityRatio"), path)
    kind = get_str(body, "type", path) or ""
    resources = _parse_resources(get_list(body, "resources", path), child(path, "resources"))
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
        shape = _parse_shape(get_list(rtcr, "shape", rtcr_path), child(rtcr_path, "shape"))
        errs.extend(_shape_errors(shape, child(path, "shape")))  # upstream reports scoringStrategy.shape
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
    with _decoding(name):
        body = _args_body(raw, name, ("ignoredResources", "ignoredResourceGroups", "scoringStrategy"), path)
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



# --------------------------------------------------------------------------------------------------
# NodeResourcesBalancedAllocation


def parse_balanced_allocation_args(
        raw: Mapping[str, Any] | None, path: str) -> tuple[NodeResourcesBalancedAllocationArgs, list[ConfigError]]:
    name = "NodeResourcesBalancedAllocation"
    with _decoding(name):
        body = _args_body(raw, name, ("resources",), path)
        resources = _parse_resources(get_list(body, "resources", path), child(path, "resources"))
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



# --------------------------------------------------------------------------------------------------
# InterPodAffinity


def parse_inter_pod_affinity_args(raw: Mapping[str, Any] | None,
                                  path: str) -> tuple[InterPodAffinityArgs, list[ConfigError]]:
    name = "InterPodAffinity"
    with _decoding(name):
        body = _args_body(raw, name, ("hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods"), path)
        weight = get_int(body, "hardPodAffinityWeight", path)
        ignore = get_bool(body, "ignorePreferredTermsOfExistingPods", path) or False
    weight = 1 if weight is None else weight
    errs = []
    if not 0 <= weight <= 100:
        errs.append(invalid(child(path, "hardPodAffinityWeight"), weight, "not in valid range [0, 100]"))
    return InterPodAffinityArgs(weight, ignore), errs



# --------------------------------------------------------------------------------------------------
# PodTopologySpread

_CONSTRAINT_FIELDS = ("maxSkew", "topologyKey", "whenUnsatisfiable", "labelSelector", "minDomains",
                      "nodeAffinityPolicy", "nodeTaintsPolicy", "matchLabelKeys")
_WHEN_UNSATISFIABLE = ("DoNotSchedule", "ScheduleAnyway")


def _parse_constraint(raw: Any, path: str) -> dict[str, Any]:
    body = as_mapping(raw, path, "TopologySpreadConstraint")
    check_fields(body, _CONSTRAINT_FIELDS, path)
    get_int(body, "maxSkew", path)
    get_int(body, "minDomains", path)
    for key in ("topologyKey", "whenUnsatisfiable", "nodeAffinityPolicy", "nodeTaintsPolicy"):
        get_str(body, key, path)
    get_str_list(body, "matchLabelKeys", path)
    as_mapping(body.get("labelSelector"), child(path, "labelSelector"), "LabelSelector")
    return {k: plain(v) for k, v in body.items() if v is not None}


def _constraint_errors(constraints: list[dict[str, Any]], path: str) -> list[ConfigError]:
    errs: list[ConfigError] = []
    for i, c in enumerate(constraints):
        p = index(path, i)
        max_skew = c.get("maxSkew", 0)
        if max_skew <= 0:
            errs.append(invalid(child(p, "maxSkew"), max_skew, "not in valid range (0, inf)"))
        key = c.get("topologyKey", "")
        if not key:
            errs.append(required(child(p, "topologyKey"), "can not be empty"))
        else:
            errs.extend(label_name_errors(key, child(p, "topologyKey")))
        when = c.get("whenUnsatisfiable", "")
        if not when:
            errs.append(required(child(p, "whenUnsatisfiable"), "can not be empty"))
        elif when not in _WHEN_UNSATISFIABLE:
            errs.append(not_supported(child(p, "whenUnsatisfiable"), when, _WHEN_UNSATISFIABLE))
        if "labelSelector" in c:
            errs.append(forbidden(child(p, "labelSelector"),
                                  "constraint must not define a selector, as they deduced for each pod"))
        for other in constraints[:i]:
            if other.get("topologyKey", "") == key and other.get("whenUnsatisfiable", "") == when:
                errs.append(duplicate(p, f"{{{key}, {when}}}"))
                break
    return errs


def parse_pod_topology_spread_args(raw: Mapping[str, Any] | None,
                                   path: str) -> tuple[PodTopologySpreadArgs, list[ConfigError]]:
    name = "PodTopologySpread"
    with _decoding(name):
        body = _args_body(raw, name, ("defaultConstraints", "defaultingType"), path)
        items = get_list(body, "defaultConstraints", path) or []
        cpath = child(path, "defaultConstraints")
        constraints = [_parse_constraint(item, index(cpath, i)) for i, item in enumerate(items)]
        defaulting = get_str(body, "defaultingType", path) or "System"
    errs: list[ConfigError] = []
    tpath = child(path, "defaultingType")
    if defaulting not in ("System", "List"):
        errs.append(not_supported(tpath, defaulting, ("System", "List")))
    elif defaulting == "System" and constraints:
        errs.append(invalid(tpath, defaulting, "when .defaultConstraints are not empty"))
    errs.extend(_constraint_errors(constraints, cpath))
    return PodTopologySpreadArgs(constraints, defaulting), errs



# --------------------------------------------------------------------------------------------------
# NodeAffinity (addedAffinity is a v1 NodeAffinity, checked as component-helpers' nodeaffinity parses it)

_LABEL_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
_FIELD_OPERATORS = ("In", "NotIn")


def _decode_requirements(raw: Any, path: str) -> list[tuple[str, str, list[str] | None]]:
    out = []
    for i, item in enumerate(as_list(raw, path) or []):
        p = index(path, i)
        body = as_mapping(item, p, "NodeSelectorRequirement")
        check_fields(body, ("key", "operator", "values"), p)
        key = get_str(body, "key", p) or ""
        op = get_str(body, "operator", p) or ""
        out.append((key, op, get_str_list(body, "values", p)))
    return out


def _decode_term(raw: Any, path: str) -> tuple[list, list]:
    body = as_mapping(raw, path, "NodeSelectorTerm")
    check_fields(body, ("matchExpressions", "matchFields"), path)
    return (_decode_requirements(body.get("matchExpressions"), child(path, "matchExpressions")),
            _decode_requirements(body.get("matchFields"), child(path, "matchFields")))


def _label_requirement_errors(key: str, op: str, values: list[str] | None, p: str) -> list[ConfigError]:
    """``labels.NewRequirement`` after the operator was mapped."""
    errs = []
    msgs = qualified_name_errors(key)
    if msgs:
        errs.append(invalid(child(p, "key"), key, "; ".join(msgs)))
    vpath = child(p, "values")
    vals = values or []
    if op in ("In", "NotIn") and not vals:
        errs.append(invalid(vpath, values, "for 'in', 'notin' operators, values set can't be empty"))
    elif op in ("Exists", "DoesNotExist") and vals:
        errs.append(invalid(vpath, values, "values set must be empty for exists and does not exist"))
    elif op in ("Gt", "Lt"):
        if len(vals) != 1:
            errs.append(invalid(vpath, values, "for 'Gt', 'Lt' operators, exactly one value is required"))
        for i, v in enumerate(vals):
            if not re.fullmatch(r"[+-]?\d+", v) or not INT64_RANGE[0] <= int(v) <= INT64_RANGE[1]:
                errs.append(invalid(index(vpath, i), v, "for 'Gt', 'Lt' operators, the value must be an integer"))
    for i, v in enumerate(vals):
        msgs = label_value_errors(v)
        if msgs:
            errs.append(invalid(index(index(vpath, i), key), v, "; ".join(msgs)))
    return errs


def _term_errors(term: tuple[list, list], path: str) -> list[ConfigError]:
    expressions, fields = term
    errs: list[ConfigError] = []
    for i, (key, op, values) in enumerate(expressions):
        p = index(child(path, "matchExpressions"), i)
        if op not in _LABEL_OPERATORS:
            errs.append(not_supported(child(p, "operator"), op, _LABEL_OPERATORS))
            continue
        errs.extend(_label_requirement_errors(key, op, values, p))
    for i, (_key, op, values) in enumerate(fields):
        p = index(child(path, "matchFields"), i)
        if op not in _FIELD_OPERATORS:
            errs.append(not_supported(child(p, "operator"), op, _FIELD_OPERATORS))
        elif len(values or []) != 1:
            errs.append(invalid(child(p, "values"), values, "must have one element"))
    return errs


def _node_selector_errors(raw: Any, path: str) -> list[ConfigError]:
    body = as_mapping(raw, path, "NodeSelector")
    check_fields(body, ("nodeSelectorTerms",), path)
    tpath = child(path, "nodeSelectorTerms")
    errs: list[ConfigError] = []
    for i, item in enumerate(get_list(body, "nodeSelectorTerms", path) or []):
        term = _decode_term(item, index(tpath, i))
        if term[0] or term[1]:  # an empty term selects nothing and is not parsed
            errs.extend(_term_errors(term, index(tpath, i)))
    return errs


def _preferred_errors(items: list[Any], path: str) -> list[ConfigError]:
    errs: list[ConfigError] = []
    for i, item in enumerate(items):
        p = index(path, i)
        body = as_mapping(item, p, "PreferredSchedulingTerm")
        check_fields(body, ("weight", "preference"), p)
        weight = get_int(body, "weight", p) or 0
        term = _decode_term(body.get("preference"), child(p, "preference"))
        if weight != 0 and (term[0] or term[1]):
            errs.extend(_term_errors(term, p))  # upstream's path has no ".preference"
    return errs


def parse_node_affinity_args(raw: Mapping[str, Any] | None,
                             path: str) -> tuple[NodeAffinityArgs, list[ConfigError]]:
    name = "NodeAffinity"
    apath = child(path, "addedAffinity")
    req_key = "requiredDuringSchedulingIgnoredDuringExecution"
    pref_key = "preferredDuringSchedulingIgnoredDuringExecution"
    errs: list[ConfigError] = []
    with _decoding(name):
        body = _args_body(raw, name, ("addedAffinity",), path)
        added = body.get("addedAffinity")
        if added is None:
            return NodeAffinityArgs(None), []
        affinity = as_mapping(added, apath, "NodeAffinity")
        check_fields(affinity, (req_key, pref_key), apath)
        if affinity.get(req_key) is not None:
            errs.extend(_node_selector_errors(affinity[req_key], child(apath, req_key)))
        errs.extend(_preferred_errors(get_list(affinity, pref_key, apath) or [], child(apath, pref_key)))
    return NodeAffinityArgs(plain(affinity)), errs



# --------------------------------------------------------------------------------------------------
# DefaultPreemption


def parse_default_preemption_args(raw: Mapping[str, Any] | None,
                                  path: str) -> tuple[DefaultPreemptionArgs, list[ConfigError]]:
    name = "DefaultPreemption"
    with _decoding(name):
        body = _args_body(raw, name, ("minCandidateNodesPercentage", "minCandidateNodesAbsolute"), path)
        pct = get_int(body, "minCandidateNodesPercentage", path)
        absolute = get_int(body, "minCandidateNodesAbsolute", path)
    pct = 10 if pct is None else pct
    absolute = 100 if absolute is None else absolute
    ppath, apath = child(path, "minCandidateNodesPercentage"), child(path, "minCandidateNodesAbsolute")
    errs = []
    if not 0 <= pct <= 100:
        errs.append(invalid(ppath, pct, "not in valid range [0, 100]"))
    if absolute < 0:
        errs.append(invalid(apath, absolute, "not in valid range [0, inf)"))
    if pct == 0 and absolute == 0:
        errs.append(invalid(ppath, pct, "cannot be zero at the same time as minCandidateNodesAbsolute"))
        errs.append(invalid(apath, absolute, "cannot be zero at the same time as minCandidateNodesPercentage"))
    return DefaultPreemptionArgs(pct, absolute), errs



# --------------------------------------------------------------------------------------------------
# VolumeBinding (StorageCapacityScoring is alpha and off in v1.34: a shape is refused)


def parse_volume_binding_args(raw: Mapping[str, Any] | None,
                              path: str) -> tuple[VolumeBindingArgs, list[ConfigError]]:
    name = "VolumeBinding"
    with _decoding(name):
        body = _args_body(raw, name, ("bindTimeoutSeconds", "shape"), path)
        timeout = get_int(body, "bindTimeoutSeconds", path, bits=64)
        shape_raw = get_list(body, "shape", path)
        shape = _parse_shape(shape_raw, child(path, "shape"))
    timeout = 600 if timeout is None else timeout
    errs = []
    if timeout < 0:
        errs.append(invalid(child(path, "bindTimeoutSeconds"), timeout,
                            "invalid BindTimeoutSeconds, should not be a negative value"))
    if shape_raw is not None:
        errs.append(invalid(child(path, "shape"), _shape_json(shape),
                            "unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring"))
    return VolumeBindingArgs(timeout, shape), errs



# --------------------------------------------------------------------------------------------------
# DynamicResources (DRASchedulerFilterTimeout is beta and on in v1.34)


def parse_dynamic_resources_args(raw: Mapping[str, Any] | None,
                                 path: str) -> tuple[DynamicResourcesArgs, list[ConfigError]]:
    name = "DynamicResources"
    with _decoding(name):
        body = _args_body(raw, name, ("filterTimeout",), path)
        ns = get_duration(body, "filterTimeout", path)
    if ns is None:
        return DynamicResourcesArgs(), []
    errs = []
    if ns < 0:
        errs.append(invalid(child(path, "filterTimeout"), format_go_duration(ns), "must be zero or positive"))
    return DynamicResourcesArgs(ns / 1e9), errs



# --------------------------------------------------------------------------------------------------

ArgsParser = Callable[[Mapping[str, Any] | None, str], tuple[Any, list[ConfigError]]]

#: plugin name -> decode + default, returning (args, validation errors); decoding errors are raised
PARSERS: dict[str, ArgsParser] = {
    "NodeResourcesFit": parse_node_resources_fit_args,
    "NodeResourcesBalancedAllocation": parse_balanced_allocation_args,
    "InterPodAffinity": parse_inter_pod_affinity_args,
    "PodTopologySpread": parse_pod_topology_spread_args,
    "NodeAffinity": parse_node_affinity_args,
    "DefaultPreemption": parse_default_preemption_args,
    "VolumeBinding": parse_volume_binding_args,
    "DynamicResources": parse_dynamic_resources_args,
}

def _raising(parse: ArgsParser) -> Callable[[Mapping[str, Any] | None, str], Any]:
    def decode(raw: Mapping[str, Any] | None, path: str = "") -> Any:
        args, errs = parse(raw, path)
        raise_all(errs)
        return args
    return decode


#: plugin name -> decode + default + validate (raises ConfigError)
DECODERS: dict[str, Callable[[Mapping[str, Any] | None, str], Any]] = {
    name: _raising(parse) for name, parse in PARSERS.items()}
