"""Compare a ``pysched simulate ... -o json`` run of a workloads scenario with its recording, as
../shared/conformance/workloads/README.md says: per workload the multiset of nodes its created pods were
bound to, its pending count and ``deleted``; every input pod pending at the start; every edit; victims."""

from __future__ import annotations

import gzip
import json
from pathlib import Path


def load_expected(path: str | Path) -> dict:
    with gzip.open(path, "rt") as f:
        return json.load(f)


def summarize(actual: dict, input_pods: set[str]) -> dict:
    """The recording's shape, computed from pysched's JSON."""
    bindings = actual["bindings"]
    nodes: dict[str, list[str]] = {}
    pending: dict[str, int] = {}
    victims: list[str] = []
    owner: dict[str, str] = {}
    seen: set[str] = set()
    for c in actual["cycles"]:
        pod = c["pod"]
        if "workload" in c:
            owner[pod] = c["workload"]
    bound_anywhere: dict[str, str] = {}
    for c in actual["cycles"]:
        if c.get("outcome") == "Scheduled":
            bound_anywhere[c["pod"]] = c["node"]
    for c in actual["cycles"]:
        for v in c.get("victims") or []:
            victims.append(v if v in input_pods or v not in owner else owner[v])
        pod = c["pod"]
        if pod in seen or pod in input_pods:
            continue
        seen.add(pod)
        key = owner.get(pod)
        if key is None:
            continue
        node = bindings.get(pod) or bound_anywhere.get(pod)
        if node:
            nodes.setdefault(key, []).append(node)
        else:
            pending[key] = pending.get(key, 0) + 1
    out: dict = {"workloads": {}, "victims": sorted(victims)}
    for key, entry in actual.get("workloads", {}).items():
        out["workloads"][key] = {"nodes": sorted(nodes.get(key, [])), "pending": pending.get(key, 0),
                                 "deleted": sorted(entry.get("deleted", []))}
    for key in set(nodes) | set(pending):
        out["workloads"].setdefault(key, {"nodes": sorted(nodes.get(key, [])), "pending": pending.get(key, 0),
                                          "deleted": []})
    out["pods"] = {p: bindings.get(p) for p in input_pods}
    out["edits"] = actual.get("edits", [])
    return out


def compare(expected: dict, actual: dict) -> tuple[dict[str, tuple[int, int]], list[str]]:
    """Per item kind (workloads, pods, edits, victims): (agreeing, total), and the disagreements."""
    got = summarize(actual, set(expected["pods"]))
    notes: list[str] = []
    counts: dict[str, tuple[int, int]] = {}
    ok = 0
    for key, exp in expected["workloads"].items():
        act = got["workloads"].get(key, {"nodes": [], "pending": 0, "deleted": []})
        if act == exp:
            ok += 1
        else:
            notes.append(f"workload {key}: expected {exp}, got {act}")
    for key in sorted(set(got["workloads"]) - set(expected["workloads"])):
        act = got["workloads"][key]
        if act["nodes"] or act["pending"] or act["deleted"]:
            notes.append(f"workload {key}: not in the recording, got {act}")
    counts["workloads"] = (ok, len(expected["workloads"]))
    ok = 0
    for pod, node in expected["pods"].items():
        if got["pods"].get(pod) == node:
            ok += 1
        else:
            notes.append(f"pod {pod}: expected {node}, got {got['pods'].get(pod)}")
    counts["pods"] = (ok, len(expected["pods"]))
    ok = 0
    for i, exp in enumerate(expected["edits"]):
        act = got["edits"][i] if i < len(got["edits"]) else {}
        bad = [k for k in exp if k not in ("count", "replicas", "taint", "label") and act.get(k) != exp[k]]
        if bad:
            notes.append(f"edit {i + 1} ({exp['edit']} {exp.get('target')}): "
                         + "; ".join(f"{k}: expected {exp[k]}, got {act.get(k)}" for k in bad))
        else:
            ok += 1
    if len(got["edits"]) != len(expected["edits"]):
        notes.append(f"edits: expected {len(expected['edits'])}, got {len(got['edits'])}")
    counts["edits"] = (ok, len(expected["edits"]))
    victims_ok = got["victims"] == sorted(expected["victims"])
    if not victims_ok:
        notes.append(f"victims: expected {sorted(expected['victims'])}, got {got['victims']}")
    counts["victims"] = (int(victims_ok), 1)
    return counts, notes
