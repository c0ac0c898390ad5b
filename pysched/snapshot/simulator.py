"""kube-scheduler-simulator interop: its export JSON as a snapshot, and its result annotations.

The simulator (kubernetes-sigs/kube-scheduler-simulator) exports its cluster as one JSON object with the
lists ``pods``, ``nodes``, ``pvs``, ``pvcs``, ``storageClasses``, ``priorityClasses``, ``namespaces`` and the
scheduler configuration it ran, ``schedulerConfig`` (the configuration's fields without ``apiVersion`` and
``kind``). Such a document is read as the objects it lists; its configuration is used unless ``--config``
is given, after dropping what kube-scheduler v1.34 would refuse (each drop is a warning).

Writing pysched's results as the simulator's pod annotations is ``pysched.report.simulator``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from pysched.snapshot.kinds import BY_KIND

_EXPORT_KINDS = {"pods": "Pod", "nodes": "Node", "pvs": "PersistentVolume", "pvcs": "PersistentVolumeClaim",
                 "storageClasses": "StorageClass", "priorityClasses": "PriorityClass", "namespaces": "Namespace"}
#: export key -> (kind, apiVersion) of its objects
EXPORT_LISTS: dict[str, tuple[str, str]] = {key: (kind, BY_KIND[kind].api_version)
                                            for key, kind in _EXPORT_KINDS.items()}
CONFIG_KEY = "schedulerConfig"
CONFIG_API_VERSION, CONFIG_KIND = "kubescheduler.config.k8s.io/v1", "KubeSchedulerConfiguration"

#: the KubeSchedulerConfiguration v1 top-level fields (v1.34)
_V1_FIELDS = frozenset({"apiVersion", "kind", "parallelism", "leaderElection", "clientConnection",
                        "enableProfiling", "enableContentionProfiling", "percentageOfNodesToScore",
                        "podInitialBackoffSeconds", "podMaxBackoffSeconds", "profiles", "extenders",
                        "delayCacheUntilActive"})
_REMOVED_PLUGINS = ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")

# ---------------------------------------------------------------------------------------------- reading
def is_export(obj: object) -> bool:
    """A simulator export: an object without ``kind`` whose keys are the export's, with nodes or pods."""
    if not isinstance(obj, Mapping) or "kind" in obj or "apiVersion" in obj:
        return False
    keys = set(obj)
    return bool(keys) and keys <= set(EXPORT_LISTS) | {CONFIG_KEY} and bool(keys & {"nodes", "pods"})


def export_objects(obj: Mapping[str, Any]) -> list[tuple[str, object]]:
    """The export's objects with where each is (``pods[3]``), each with its ``kind`` and ``apiVersion`` (the
    export leaves them out)."""
    out: list[tuple[str, object]] = []
    for key, (kind, api_version) in EXPORT_LISTS.items():
        items = obj.get(key) or []
        for i, item in enumerate(items if isinstance(items, list) else [items]):
            if isinstance(item, Mapping):
                out.append((f"{key}[{i}]", {"apiVersion": api_version, "kind": kind, **item}))
            else:
                out.append((f"{key}[{i}]", item))  # the loader reports it as not an object
    return out


def export_config(obj: Mapping[str, Any], source: str) -> tuple[dict | None, list[str]]:
    """The export's scheduler configuration as a v1 ``KubeSchedulerConfiguration``, and warnings naming what
    was dropped because kube-scheduler v1.34 would refuse it."""
    raw = obj.get(CONFIG_KEY)
    if not isinstance(raw, Mapping):
        return None, []
    cfg = copy.deepcopy(dict(raw))
    warnings = []
    where = f"{source}: {CONFIG_KEY}"
    for key in sorted(set(cfg) - _V1_FIELDS):
        warnings.append(f"{where}.{key} is not a KubeSchedulerConfiguration v1 field in v1.34: ignored")
        del cfg[key]
    for i, prof in enumerate(cfg.get("profiles") or []):
        if not isinstance(prof, dict):
            continue
        for point, sets in (prof.get("plugins") or {}).items():
            if not isinstance(sets, dict):
                continue
            for which in ("enabled", "disabled"):
                refs = sets.get(which)
                if not isinstance(refs, list):
                    continue
                kept = [r for r in refs if not (isinstance(r, Mapping) and r.get("name") in _REMOVED_PLUGINS)]
                for r in refs:
                    if r not in kept:
                        warnings.append(f"{where}.profiles[{i}].plugins.{point}.{which}: plugin {r['name']} was "
                                        "removed from kube-scheduler (v1.34 has NodeVolumeLimits): ignored")
                sets[which] = kept
        args = prof.get("pluginConfig")
        if isinstance(args, list):
            prof["pluginConfig"] = [a for a in args
                                    if not (isinstance(a, Mapping) and a.get("name") in _REMOVED_PLUGINS)]
    cfg["apiVersion"], cfg["kind"] = CONFIG_API_VERSION, CONFIG_KIND
    return cfg, warnings
