"""NodeAffinityArgs: types and validation (addedAffinity is a v1 NodeAffinity, checked as
component-helpers' nodeaffinity parses it)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pysched.apimachinery import (
    INT64_RANGE,
    as_list,
    as_mapping,
    check_fields,
    child,
    get_int,
    get_list,
    get_str,
    get_str_list,
    index,
    invalid,
    label_value_errors,
    not_supported,
    plain,
    qualified_name_errors,
)
from pysched.errors import ConfigError
from pysched.framework.pluginargs.common import args_body, decoding
from pysched.lazyclass import dataclass


@dataclass(slots=True)
class NodeAffinityArgs:
    added_affinity: dict | None = None  # raw v1 NodeAffinity


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
    with decoding(name):
        body = args_body(raw, name, ("addedAffinity",), path)
        added = body.get("addedAffinity")
        if added is None:
            return NodeAffinityArgs(None), []
        affinity = as_mapping(added, apath, "NodeAffinity")
        check_fields(affinity, (req_key, pref_key), apath)
        if affinity.get(req_key) is not None:
            errs.extend(_node_selector_errors(affinity[req_key], child(apath, req_key)))
        errs.extend(_preferred_errors(get_list(affinity, pref_key, apath) or [], child(apath, pref_key)))
    return NodeAffinityArgs(plain(affinity)), errs
