"""PodTopologySpreadArgs: types, v1 defaults and validation (the default constraints are
v1 TopologySpreadConstraints without a selector)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import Any

from pysched.apimachinery import (
    as_mapping,
    check_fields,
    child,
    duplicate,
    forbidden,
    get_int,
    get_list,
    get_str,
    get_str_list,
    index,
    invalid,
    label_name_errors,
    not_supported,
    plain,
    required,
)
from pysched.errors import ConfigError
from pysched.framework.pluginargs.common import args_body, decoding
from pysched.lazyclass import dataclass


@dataclass(slots=True)
class PodTopologySpreadArgs:
    default_constraints: list[dict] = field(default_factory=list)  # raw v1 TopologySpreadConstraints
    defaulting_type: str = "System"


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
    with decoding(name):
        body = args_body(raw, name, ("defaultConstraints", "defaultingType"), path)
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
