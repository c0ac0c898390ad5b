"""Generate pysched/snapshot/data/k8s-schema.json: the fields and types of every object kind pysched reads,
derived from the ``kubernetes`` client package's models (``openapi_types`` / ``attribute_map``).

    python tools/gen_k8s_schema.py            # writes the data file from the installed client
    python tools/gen_k8s_schema.py --check    # exit 1 when the file differs from what the client gives

Run it with the client whose Kubernetes version pysched follows (kubernetes==34.x for v1.34). The
file, not the client, is what pysched reads at run time: ``kubernetes`` may be an optional extra, and
the client's model objects are never built on the hot path.

Compact type codes: ``s`` string, ``i`` integer, ``f`` number, ``b`` boolean, ``t`` RFC 3339 time (a
string), ``q`` quantity (a string or a number), ``o`` anything (IntOrString, RawExtension, free JSON);
``[X`` a list of X, ``{X`` a map of string to X; any other code names a type of the ``types`` table.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import sys
import types
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "pysched" / "snapshot" / "data" / "k8s-schema.json"

#: (apiVersion, kind) -> client model; every kind pysched reads (or will soon: workloads, DRA, quotas)
KINDS = {
    ("v1", "Pod"): "V1Pod", ("v1", "Node"): "V1Node", ("v1", "Namespace"): "V1Namespace",
    ("v1", "Service"): "V1Service", ("v1", "ReplicationController"): "V1ReplicationController",
    ("v1", "PersistentVolume"): "V1PersistentVolume", ("v1", "PersistentVolumeClaim"): "V1PersistentVolumeClaim",
    ("v1", "LimitRange"): "V1LimitRange", ("v1", "ResourceQuota"): "V1ResourceQuota",
    ("v1", "ConfigMap"): "V1ConfigMap",
    ("scheduling.k8s.io/v1", "PriorityClass"): "V1PriorityClass",
    ("policy/v1", "PodDisruptionBudget"): "V1PodDisruptionBudget",
    ("apps/v1", "ReplicaSet"): "V1ReplicaSet", ("apps/v1", "StatefulSet"): "V1StatefulSet",
    ("apps/v1", "Deployment"): "V1Deployment", ("apps/v1", "DaemonSet"): "V1DaemonSet",
    ("batch/v1", "Job"): "V1Job", ("batch/v1", "CronJob"): "V1CronJob",
    ("storage.k8s.io/v1", "StorageClass"): "V1StorageClass", ("storage.k8s.io/v1", "CSINode"): "V1CSINode",
    ("storage.k8s.io/v1", "CSIDriver"): "V1CSIDriver", ("storage.k8s.io/v1", "VolumeAttachment"): "V1VolumeAttachment",
    ("storage.k8s.io/v1", "CSIStorageCapacity"): "V1CSIStorageCapacity",
    ("resource.k8s.io/v1", "ResourceClaim"): "ResourceV1ResourceClaim",
    ("resource.k8s.io/v1", "ResourceClaimTemplate"): "V1ResourceClaimTemplate",
    ("resource.k8s.io/v1", "ResourceSlice"): "V1ResourceSlice",
    ("resource.k8s.io/v1", "DeviceClass"): "V1DeviceClass",
}

#: the client types resource.Quantity as a string; these fields hold quantities (a number is fine there)
QUANTITY_MAPS = {"limits", "requests", "capacity", "allocatable", "overhead", "hard", "used", "max", "min",
                 "default", "default_request", "max_limit_request_ratio", "allocated_resources"}
QUANTITY_FIELDS = {"size_limit", "maximum_volume_size", "capacity", "value"}
QUANTITY_FIELD_TYPES = {("V1EmptyDirVolumeSource", "size_limit"), ("V1CSIStorageCapacity", "capacity"),
                        ("V1CSIStorageCapacity", "maximum_volume_size"), ("V1DeviceCapacity", "value")}

SCALARS = {"str": "s", "bytes": "s", "int": "i", "float": "f", "bool": "b", "datetime": "t", "date": "t", "object": "o",
           "Any": "o"}


def _models() -> types.ModuleType:
    """``kubernetes.client.models`` without running ``kubernetes/__init__`` (it imports auth plugins)."""
    spec = importlib.util.find_spec("kubernetes")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("the kubernetes client package is not installed")
    if "kubernetes" not in sys.modules:
        pkg = types.ModuleType("kubernetes")
        pkg.__path__ = list(spec.submodule_search_locations)
        sys.modules["kubernetes"] = pkg
    from kubernetes.client import models
    return models


def _code(models: types.ModuleType, owner: str, attr: str, text: str, todo: list[str]) -> str:
    text = text.strip()
    m = re.fullmatch(r"[Ll]ist\[(.+)\]", text)
    if m:
        return "[" + _code(models, owner, "", m.group(1), todo)
    m = re.fullmatch(r"dict\(str, (.+)\)|Dict\[str, (.+)\]", text)
    if m:
        inner = _code(models, owner, "", m.group(1) or m.group(2), todo)
        if inner == "s" and attr in QUANTITY_MAPS:
            inner = "q"
        return "{" + inner
    if text in SCALARS:
        if text == "str" and (owner, attr) in QUANTITY_FIELD_TYPES:
            return "q"
        return SCALARS[text]
    if not hasattr(models, text):
        raise SystemExit(f"{owner}.{attr}: unknown type {text!r}")
    todo.append(text)
    return text


def build() -> dict:
    models = _models()
    table: dict[str, dict[str, str]] = {}
    todo = list(KINDS.values())
    while todo:
        name = todo.pop()
        if name in table:
            continue
        cls = getattr(models, name)
        fields: dict[str, str] = {}
        for attr, typ in sorted(cls.openapi_types.items()):
            fields[cls.attribute_map[attr]] = _code(models, name, attr, typ, todo)
        table[name] = fields
    from kubernetes import client
    version = getattr(client, "__version__", "") or _dist_version()
    return {"generator": "tools/gen_k8s_schema.py", "client": version,
            "kinds": {f"{api}/{kind}": model for (api, kind), model in sorted(KINDS.items())},
            "types": dict(sorted(table.items()))}


def _dist_version() -> str:
    from importlib.metadata import version
    return version("kubernetes")


def render(schema: dict) -> str:
    return json.dumps(schema, indent=0, sort_keys=False, separators=(",", ":")) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare instead of writing")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    text = render(build())
    if args.check:
        current = args.out.read_text() if args.out.exists() else ""
        if current != text:
            print(f"{args.out} differs from what the installed client gives", file=sys.stderr)
            return 1
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(f"wrote {args.out} ({len(text)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
