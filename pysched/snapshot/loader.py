"""Read snapshots: files, folders and stdin holding YAML or JSON as ``kubectl get -o yaml|json`` prints.

Objects are parsed into the model and admitted as the API server would have admitted them before the
scheduler saw them (priority from the PriorityClass, defaults already applied by the model).
"""

from __future__ import annotations

import gzip
import json
import os
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml

from pysched.errors import InputError, InputErrors
from pysched.model.objects import (
    FieldError,
    Namespace,
    Pod,
    PriorityClass,
    parse_namespace,
    parse_node,
    parse_pdb,
    parse_pod,
    parse_priority_class,
    parse_workload,
)
from pysched.snapshot.cluster import Cluster

try:  # the C loader is many times faster on large dumps
    _Loader = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - libyaml missing
    _Loader = yaml.SafeLoader  # type: ignore[misc]

SNAPSHOT_SUFFIXES = (".yaml", ".yml", ".json", ".yaml.gz", ".yml.gz", ".json.gz")
DEFAULT_MAX_BYTES = 1 << 30
MAX_ERRORS = 20
BUILTIN_PRIORITY_CLASSES = {"system-node-critical": 2000001000, "system-cluster-critical": 2000000000}
WORKLOAD_KINDS = ("Service", "ReplicationController", "ReplicaSet", "StatefulSet")
USED_KINDS = {"Node", "Pod", "Namespace", "PriorityClass", "PodDisruptionBudget", *WORKLOAD_KINDS}


@dataclass(slots=True)
class Document:
    source: str
    index: int  # 1-based document number within the source
    obj: object
    line: int | None = None


def expand_paths(paths: Iterable[str]) -> list[str]:
    """Files as given; folders walked recursively for snapshot files, in sorted order."""
    out: list[str] = []
    for p in paths:
        if p == "-":
            out.append(p)
            continue
        path = Path(p)
        if path.is_dir():
            found = sorted(str(f) for f in path.rglob("*") if f.is_file() and f.name.endswith(SNAPSHOT_SUFFIXES))
            if not found:
                raise InputError("folder holds no .yaml, .yml or .json files", file=p)
            out.extend(found)
        elif path.exists():
            out.append(p)
        else:
            raise InputError("no such file or folder", file=p)
    return out


def read_source(path: str, max_bytes: int = DEFAULT_MAX_BYTES) -> str:
    if path == "-":
        data = sys.stdin.buffer.read(max_bytes + 1)
    else:
        try:
            size = os.path.getsize(path)
            if size > max_bytes:
                raise InputError(f"file is {size} bytes, over the limit of {max_bytes} bytes (--max-file-size)",
                                 file=path)
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise InputError(f"cannot read: {e.strerror or e}", file=path) from None
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as e:
            raise InputError(f"not a readable gzip file: {e}", file=path) from None
    if len(data) > max_bytes:
        raise InputError(f"input is over the limit of {max_bytes} bytes (--max-file-size)", file=path)
    if b"\x00" in data[:8192]:
        raise InputError("binary data: expected YAML or JSON text", file=path)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise InputError(f"not UTF-8 text (byte {e.start}): expected YAML or JSON", file=path) from None


def parse_documents(text: str, source: str) -> Iterator[Document]:
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as e:
            raise InputError(f"invalid JSON: {e.msg} (line {e.lineno}, column {e.colno})", file=source,
                             line=e.lineno) from None
        yield Document(source, 1, obj, 1)
        return
    try:
        loader = _Loader(text)
        try:
            index = 0
            while loader.check_node():
                node = loader.get_node()
                index += 1
                if node is None:
                    continue
                _check_yaml_size(node, source, index)
                obj = loader.construct_document(node)
                yield Document(source, index, obj, node.start_mark.line + 1)
        finally:
            loader.dispose()
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise InputError(f"invalid YAML: {problem}", file=source, line=line) from None


MAX_YAML_NODES = 5_000_000
MAX_DEPTH = 100


def _check_yaml_size(root: yaml.Node, source: str, index: int) -> None:
    """Refuse alias bombs and absurd nesting before constructing Python objects."""
    seen_nodes = 0
    stack = [(root, 0)]
    visited: set[int] = set()
    expanded = 0
    while stack:
        node, depth = stack.pop()
        expanded += 1
        if depth > MAX_DEPTH:
            raise InputError(f"nesting deeper than {MAX_DEPTH} levels", file=source, doc=index,
                             line=node.start_mark.line + 1)
        if expanded > MAX_YAML_NODES:
            raise InputError("document expands to too many nodes (YAML alias bomb?)", file=source, doc=index)
        if id(node) in visited and isinstance(node, (yaml.SequenceNode, yaml.MappingNode)):
            # an alias: its expansion counts again, but we only walk it once more per reference
            pass
        visited.add(id(node))
        seen_nodes += 1
        if isinstance(node, yaml.SequenceNode):
            stack.extend((c, depth + 1) for c in node.value)
        elif isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                stack.append((k, depth + 1))
                stack.append((v, depth + 1))


def iter_objects(docs: Iterable[Document]) -> Iterator[tuple[Document, dict, str]]:
    """Every Kubernetes object, with ``*List`` documents flattened; yields (doc, object, where)."""
    for doc in docs:
        obj = doc.obj
        if obj is None:
            continue
        yield from _flatten(doc, obj, "")


def _flatten(doc: Document, obj: object, where: str) -> Iterator[tuple[Document, dict, str]]:
    if isinstance(obj, list):
        for i, item in enumerate(obj):
            yield from _flatten(doc, item, f"{where}[{i}]")
        return
    if not isinstance(obj, Mapping):
        raise InputError(f"expected a Kubernetes object (a mapping with apiVersion and kind), got "
                         f"{type(obj).__name__}", file=doc.source, doc=doc.index, line=doc.line)
    kind = obj.get("kind")
    if isinstance(kind, str) and kind.endswith("List") and isinstance(obj.get("items"), list):
        item_kind = kind[:-4] if kind != "List" else None
        for i, item in enumerate(obj["items"]):
            if isinstance(item, Mapping) and item_kind and "kind" not in item:
                item = {**item, "kind": item_kind, "apiVersion": obj.get("apiVersion", "v1")}
            yield from _flatten(doc, item, f"{where}items[{i}]")
        return
    yield doc, obj, where  # type: ignore[misc]


def load_snapshot(paths: Iterable[str], max_bytes: int = DEFAULT_MAX_BYTES) -> Cluster:
    """Read, parse and admit every object of the given files and folders."""
    files = expand_paths(paths)
    raw_objects: list[tuple[Document, dict, str]] = []
    for f in files:
        text = read_source(f, max_bytes)
        raw_objects.extend(iter_objects(parse_documents(text, "<stdin>" if f == "-" else f)))
    cluster = build_cluster(raw_objects)
    cluster.sources = files
    return cluster


def _describe(obj: Mapping) -> str:
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), Mapping) else {}
    name = meta.get("name", "<unnamed>")
    ns = meta.get("namespace")
    kind = obj.get("kind", "<no kind>")
    return f"{kind} {ns}/{name}" if ns else f"{kind} {name}"


def build_cluster(objects: list[tuple[Document, dict, str]]) -> Cluster:
    cluster = Cluster()
    errors: list[InputError] = []
    seen: dict[tuple, tuple[str, int]] = {}
    ignored: dict[str, int] = {}
    pods_raw: list[tuple[Document, dict]] = []

    def fail(doc: Document, obj: Mapping, message: str, fieldpath: str | None = None) -> None:
        errors.append(InputError(message, file=doc.source, doc=doc.index, line=doc.line, obj=_describe(obj),
                                 field=fieldpath))

    for doc, obj, _where in objects:
        kind, api = obj.get("kind"), obj.get("apiVersion")
        if not isinstance(kind, str) or not kind:
            fail(doc, obj, "missing 'kind': not a Kubernetes object", "kind")
            continue
        if not isinstance(api, str) or not api:
            fail(doc, obj, "missing 'apiVersion'", "apiVersion")
            continue
        meta = obj.get("metadata")
        if not isinstance(meta, Mapping) or not isinstance(meta.get("name"), str) or not meta.get("name"):
            fail(doc, obj, "required: a non-empty string", "metadata.name")
            continue
        if kind not in USED_KINDS:
            label = f"{api}/{kind}"
            ignored[label] = ignored.get(label, 0) + 1
            continue
        namespaced = kind not in ("Node", "Namespace", "PriorityClass")
        ident = (kind, (meta.get("namespace") or "default") if namespaced else "", meta["name"])
        if ident in seen:
            first = seen[ident]
            fail(doc, obj, f"duplicate object: already defined in {first[0]} document {first[1]}")
            continue
        seen[ident] = (doc.source, doc.index)
        try:
            if kind == "Pod":
                pods_raw.append((doc, obj))
            elif kind == "Node":
                cluster.nodes.append(parse_node(obj))
            elif kind == "Namespace":
                ns = parse_namespace(obj)
                cluster.namespaces[ns.name] = ns
            elif kind == "PriorityClass":
                pc = parse_priority_class(obj)
                cluster.priority_classes[pc.name] = pc
            elif kind == "PodDisruptionBudget":
                cluster.pdbs.append(parse_pdb(obj))
            else:
                cluster.workloads.setdefault(kind, []).append(parse_workload(obj, kind))
        except FieldError as e:
            fail(doc, obj, e.message, e.path)
        if len(errors) >= MAX_ERRORS:
            break

    for label in sorted(ignored):
        cluster.ignored_kinds.append(label)
        cluster.warnings.append(f"ignored {ignored[label]} object(s) of kind {label}: not used by the scheduler")

    pods = []
    for i, (doc, obj) in enumerate(pods_raw):
        if len(errors) >= MAX_ERRORS:
            break
        try:
            pods.append(parse_pod(obj, i))
        except FieldError as e:
            fail(doc, obj, e.message, e.path)
    if errors:
        raise errors[0] if len(errors) == 1 else InputErrors(errors)
    _admit(cluster, pods)
    return cluster


def _admit(cluster: Cluster, pods: list) -> None:
    """What admission and the controllers did before the scheduler saw these pods."""
    for name, value in BUILTIN_PRIORITY_CLASSES.items():
        if name not in cluster.priority_classes:
            cluster.priority_classes[name] = PriorityClass(name, value, False, None)
    default_class = None
    for pc in sorted(cluster.priority_classes.values(), key=lambda c: c.name):
        if pc.global_default:
            default_class = pc
            break
    node_names = {n.name for n in cluster.nodes}
    for ns in {p.namespace for p in pods} - set(cluster.namespaces):
        cluster.namespaces[ns] = Namespace(ns, {"kubernetes.io/metadata.name": ns})
    for pod in pods:
        if pod.phase in ("Succeeded", "Failed"):
            continue
        if not _admit_priority(cluster, pod, default_class):
            continue
        if pod.node_name and pod.node_name not in node_names:
            cluster.warnings.append(f"Pod {pod.key}: bound to node {pod.node_name!r}, which is not in the "
                                    f"snapshot; the pod is on no node")
            continue
        cluster.pods.append(pod)


def _admit_priority(cluster: Cluster, pod: Pod, default_class: PriorityClass | None) -> bool:
    """Priority admission; False when the pod names a PriorityClass that does not exist.

    A pod that names no class keeps a ``spec.priority`` it already carries (dumps of running clusters
    do); only a pod with neither gets the globalDefault class, as the recorded scheduler saw them.
    """
    if pod.priority_class_name:
        pc = cluster.priority_classes.get(pod.priority_class_name)
        if pc is None:
            reason = f"no PriorityClass with name {pod.priority_class_name} was found"
            cluster.rejected_pods.append((pod.key, reason))
            cluster.warnings.append(f"Pod {pod.key}: rejected as admission would: {reason}")
            return False
        pod.priority = pc.value
        if pc.preemption_policy:
            pod.preemption_policy = pc.preemption_policy
        return True
    own = pod.raw.get("spec", {}).get("priority")
    if default_class is not None and not (isinstance(own, int) and not isinstance(own, bool)):
        pod.priority = default_class.value
        pod.priority_class_name = default_class.name
        if default_class.preemption_policy:
            pod.preemption_policy = default_class.preemption_policy
    return True
