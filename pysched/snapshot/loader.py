"""Read snapshots: files, folders and stdin holding YAML or JSON as ``kubectl get -o yaml|json`` prints.

Objects are parsed into the model and admitted as the API server would have admitted them before the
scheduler saw them (priority from the PriorityClass, defaults already applied by the model).

Bad input is an ``InputError`` naming the file, the document, the line (YAML), the object and the field
path; the problems of all files are collected and reported together (up to ``MAX_ERRORS``). Reading is
bounded: files over ``max_bytes`` are refused, gzip is decompressed to at most ``max_bytes``, and every
YAML stream is checked event by event *before* it is composed, so that alias bombs and absurd nesting
are refused in time proportional to the text (libyaml's composer recurses in C and would crash the
interpreter on deep nesting).

Unknown fields of known kinds are ignored, as the API server's non-strict decoding ignores them (with a
warning for Pod and Node); ``strict=True`` makes unknown fields of Pod and Node (top level, metadata,
spec, containers) and label values the API server would reject errors.
"""

from __future__ import annotations

import difflib
import gzip
import io
import json
import os
import re
import sys
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import orjson
import yaml

from pysched.errors import InputError, InputErrors
from pysched.model.dra import API_VERSION as DRA_API_VERSION, CLUSTER_SCOPED_DRA, DRA_KINDS
from pysched.model.labels import label_key_error, label_value_error
from pysched.model.objects import (
    FieldError,
    parse_namespace,
    parse_node,
    parse_pdb,
    parse_pod,
    parse_priority_class,
    parse_workload,
    validate_pod,
)
from pysched.model.storage import (
    parse_csi_driver,
    parse_csi_node,
    parse_csi_storage_capacity,
    parse_pv,
    parse_pvc,
    parse_storage_class,
    parse_volume_attachment,
)
from pysched.snapshot.admission import admit_loaded_pods, parse_limit_range
from pysched.snapshot.cluster import Cluster
from pysched.snapshot.fastyaml import read_block_yaml
from pysched.snapshot.names import NameGenerator
from pysched.snapshot.simulator import export_config, export_objects, is_export

_Base: Any  # the C loader or the pure-Python one: the stubs type them apart
try:  # the C loader is many times faster on large dumps
    _Base = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - libyaml missing
    _Base = yaml.SafeLoader


class _Loader(_Base):
    """Timestamps stay the strings they are: Kubernetes reads them as RFC 3339 text, and an unquoted
    ``2025-13-45`` must not fail inside the YAML constructor."""


_Loader.add_constructor("tag:yaml.org,2002:timestamp", _Base.construct_yaml_str)

SNAPSHOT_SUFFIXES = (".yaml", ".yml", ".json", ".yaml.gz", ".yml.gz", ".json.gz")
DEFAULT_MAX_BYTES = 1 << 30
MAX_ERRORS = 20
MAX_DEPTH = 100  # nesting of one document; Kubernetes objects stay far below
MAX_ALIAS_NODES = 1_000_000  # nodes that aliases may add to one file when expanded
LOCATE_MAX_CHARS = 8 << 20  # error messages name the line of the field in files up to this size

WORKLOAD_KINDS = ("Service", "ReplicationController", "ReplicaSet", "StatefulSet")
# expanded into pods by the controllers layer (pysched.controllers); LimitRange feeds admission of created pods
CONTROLLER_KINDS = ("Deployment", "DaemonSet", "Job", "CronJob", "LimitRange")
STORAGE_KINDS = ("PersistentVolume", "PersistentVolumeClaim", "StorageClass", "CSINode", "CSIDriver",
                 "VolumeAttachment", "CSIStorageCapacity")
USED_KINDS = {"Node", "Pod", "Namespace", "PriorityClass", "PodDisruptionBudget", *WORKLOAD_KINDS, *STORAGE_KINDS,
              *DRA_KINDS, *CONTROLLER_KINDS}
API_VERSIONS = {"Node": ("v1",), "Pod": ("v1",), "Namespace": ("v1",), "Service": ("v1",),
                "ReplicationController": ("v1",), "PriorityClass": ("scheduling.k8s.io/v1",),
                "PodDisruptionBudget": ("policy/v1",), "ReplicaSet": ("apps/v1",), "StatefulSet": ("apps/v1",),
                "PersistentVolume": ("v1",), "PersistentVolumeClaim": ("v1",),
                "StorageClass": ("storage.k8s.io/v1",), "CSINode": ("storage.k8s.io/v1",),
                "CSIDriver": ("storage.k8s.io/v1",), "VolumeAttachment": ("storage.k8s.io/v1",),
                "CSIStorageCapacity": ("storage.k8s.io/v1",), **{k: (DRA_API_VERSION,) for k in DRA_KINDS},
                "Deployment": ("apps/v1",), "DaemonSet": ("apps/v1",), "Job": ("batch/v1",), "CronJob": ("batch/v1",),
                "LimitRange": ("v1",)}
CLUSTER_SCOPED = ("Node", "Namespace", "PriorityClass", "PersistentVolume", "StorageClass", "CSINode", "CSIDriver",
                  "VolumeAttachment", *CLUSTER_SCOPED_DRA)

# Fields of Kubernetes v1.34 the API server knows; strict mode refuses others, default mode warns.
OBJECT_FIELDS = ("apiVersion", "kind", "metadata", "spec", "status")
METADATA_FIELDS = ("name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
                   "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels",
                   "annotations", "ownerReferences", "finalizers", "managedFields")
POD_SPEC_FIELDS = (
    "volumes", "initContainers", "containers", "ephemeralContainers", "restartPolicy",
    "terminationGracePeriodSeconds", "activeDeadlineSeconds", "dnsPolicy", "nodeSelector", "serviceAccountName",
    "serviceAccount", "automountServiceAccountToken", "nodeName", "hostNetwork", "hostPID", "hostIPC",
    "shareProcessNamespace", "securityContext", "imagePullSecrets", "hostname", "subdomain", "affinity",
    "schedulerName", "tolerations", "hostAliases", "priorityClassName", "priority", "dnsConfig", "readinessGates",
    "runtimeClassName", "enableServiceLinks", "preemptionPolicy", "overhead", "topologySpreadConstraints",
    "setHostnameAsFQDN", "os", "hostUsers", "schedulingGates", "resourceClaims", "resources", "hostnameOverride")
CONTAINER_FIELDS = (
    "name", "image", "command", "args", "workingDir", "ports", "envFrom", "env", "resources", "resizePolicy",
    "restartPolicy", "restartPolicyRules", "volumeMounts", "volumeDevices", "livenessProbe", "readinessProbe",
    "startupProbe", "lifecycle", "terminationMessagePath", "terminationMessagePolicy", "imagePullPolicy",
    "securityContext", "stdin", "stdinOnce", "tty")
NODE_SPEC_FIELDS = ("podCIDR", "podCIDRs", "providerID", "unschedulable", "taints", "configSource", "externalID")


@dataclass(slots=True)
class Document:
    source: str
    index: int  # 1-based document number within the source
    obj: object
    line: int | None = None
    text: str | None = None  # the whole text of the source (when small enough): errors find a field's line


# ================================================================================================ files

def expand_paths(paths: Iterable[str]) -> list[str]:
    """Files as given; folders walked recursively for snapshot files, in sorted order."""
    out: list[str] = []
    errors: list[InputError] = []
    for p in paths:
        if p == "-":
            out.append(p)
            continue
        path = Path(p)
        try:
            if path.is_dir():
                found = _walk(p)
                if not found:
                    errors.append(InputError("folder holds no .yaml, .yml or .json files (nor their .gz)", file=p))
                out.extend(found)
            elif path.exists():
                out.append(p)
            else:
                errors.append(InputError("no such file or folder", file=p))
        except OSError as e:
            errors.append(InputError(f"cannot read: {e.strerror or e}", file=p))
    _raise(errors)
    return out


MAX_FOLDER_ENTRIES = 100_000


def _walk(folder: str) -> list[str]:
    """Snapshot files under ``folder``, sorted; symlinked folders are not followed (no loops), and a
    folder with more than ``MAX_FOLDER_ENTRIES`` entries (``/`` given by mistake) is refused."""
    found: list[str] = []
    seen = 0
    for root, dirs, files in os.walk(folder):
        seen += len(dirs) + len(files)
        if seen > MAX_FOLDER_ENTRIES:
            raise InputError(f"folder holds more than {MAX_FOLDER_ENTRIES} entries: pass the snapshot's own "
                             f"folder or files", file=folder)
        for name in files:
            if name.endswith(SNAPSHOT_SUFFIXES):
                full = os.path.join(root, name)
                if os.path.isfile(full):
                    found.append(full)
    return sorted(found)


def read_source(path: str, max_bytes: int = DEFAULT_MAX_BYTES) -> str:
    """The text of a file ('-' = stdin), gzip-decompressed when it is gzip; at most ``max_bytes``."""
    name = "<stdin>" if path == "-" else path
    limit = f"over the limit of {max_bytes} bytes (raise it with --max-file-size)"
    if path == "-":
        if _isatty(sys.stdin):
            raise InputError("reading the snapshot from stdin, but stdin is a terminal: pipe a snapshot in "
                             "(kubectl get nodes,pods -A -o yaml | pysched simulate -)", file=name)
        data = _read_bounded(sys.stdin.buffer, max_bytes, name)
    else:
        try:
            size = os.path.getsize(path)
            if size > max_bytes:
                raise InputError(f"file is {size} bytes, {limit}", file=path)
            with open(path, "rb") as f:
                data = _read_bounded(f, max_bytes, path)
        except OSError as e:
            raise InputError(f"cannot read: {e.strerror or e}", file=path) from None
    if len(data) > max_bytes:
        raise InputError(f"input is {limit}", file=name)
    if data[:2] == b"\x1f\x8b":
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(data)) as gz:
                data = gz.read(max_bytes + 1)
        except (OSError, EOFError, zlib.error) as e:
            raise InputError(f"not a readable gzip file: {e}", file=name) from None
        if len(data) > max_bytes:
            raise InputError(f"decompressed input is {limit}", file=name)
    return _decode(data, name)


def _isatty(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError, OSError):
        return False


def _read_bounded(f: io.BufferedIOBase | BinaryIO, max_bytes: int, name: str) -> bytes:
    """At most ``max_bytes + 1`` bytes; stops early on binary data (``/dev/zero`` must not fill memory)."""
    head = f.read(min(8192, max_bytes + 1))
    if b"\x00" in head and not head.startswith((b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")):
        if head[:2] != b"\x1f\x8b":
            raise InputError("binary data: expected YAML or JSON text", file=name)
    rest = f.read(max_bytes + 1 - len(head)) if len(head) <= max_bytes else b""
    return head + rest


def _decode(data: bytes, name: str) -> str:
    for bom, codec in ((b"\x00\x00\xfe\xff", "utf-32-be"), (b"\xff\xfe\x00\x00", "utf-32-le"),
                       (b"\xfe\xff", "utf-16-be"), (b"\xff\xfe", "utf-16-le")):
        if data.startswith(bom):  # e.g. PowerShell's `kubectl get ... > file` writes UTF-16
            try:
                return data[len(bom):].decode(codec)
            except UnicodeDecodeError as e:
                raise InputError(f"not valid {codec.upper()} text (byte {e.start + len(bom)})", file=name) from None
    if b"\x00" in data[:8192]:
        raise InputError("binary data: expected YAML or JSON text", file=name)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise InputError(f"not UTF-8 text (byte {e.start} is {data[e.start:e.start + 1]!r}): expected YAML or "
                         f"JSON in UTF-8", file=name, line=line) from None


# ================================================================================================ documents

def parse_documents(text: str, source: str) -> Iterator[Document]:
    """The documents of a YAML stream, a JSON value or a stream of concatenated JSON values."""
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            docs = _parse_json(text, source)
        except InputError:
            if source.endswith((".json", ".json.gz")):
                raise
            docs = None  # YAML in flow style, perhaps; its own errors are reported then
        if docs is not None:
            yield from docs
            return
    mixed = _parse_json_documents_in_yaml(text, source)
    if mixed is not None:
        yield from mixed
        return
    fast = read_block_yaml(text)
    if fast is not None:
        keep = text if len(text) <= LOCATE_MAX_CHARS else None
        for index, (obj, line) in enumerate(fast, 1):
            yield Document(source, index, obj, line, keep)
        return
    yield from _parse_yaml(text, source)


_DOC_SEPARATOR = re.compile(r"^---[ \t]*$", re.M)


def _parse_json_documents_in_yaml(text: str, source: str) -> list[Document] | None:
    """A YAML stream some of whose documents are JSON (``kubectl get -o json`` outputs joined with
    ``---``): those documents are parsed as JSON, many times faster; the others as YAML. None when the
    stream holds no JSON document, or one that does not parse as JSON (the YAML path then reports)."""
    seps = [(m.start(), m.end()) for m in _DOC_SEPARATOR.finditer(text)]
    if not seps:
        return None
    begins = [0] + [end for _, end in seps]
    ends = [start for start, _ in seps] + [len(text)]
    chunks = [(b, text[b:e]) for b, e in zip(begins, ends, strict=True)]
    if not any(c.lstrip().startswith("{") for _, c in chunks):
        return None
    keep = text if len(text) <= LOCATE_MAX_CHARS else None
    docs: list[Document] = []
    first_line, counted = 1, 0
    for offset, chunk in chunks:
        first_line += text.count("\n", counted, offset)  # counted once per stretch: linear in the text
        counted = offset
        body = chunk.lstrip()
        if body.startswith("{"):
            try:
                obj = _json_loads(chunk)
            except (ValueError, RecursionError):
                return None
            line = first_line + chunk.count("\n", 0, len(chunk) - len(body))
            docs.append(Document(source, len(docs) + 1, obj, line, keep))
            continue
        for d in _parse_yaml(chunk, source):
            docs.append(Document(source, len(docs) + 1, d.obj,
                                 None if d.line is None else d.line + first_line - 1, keep))
    return docs


def _json_loads(text: str) -> object:
    """One JSON value: orjson when it accepts the text (several times faster, same values), else the
    standard library, which also reads what orjson refuses (integers beyond 64 bits, NaN)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


def _parse_json(text: str, source: str) -> list[Document]:
    keep = text if len(text) <= LOCATE_MAX_CHARS else None
    try:  # the common case, one value (a List): orjson at once
        whole = orjson.loads(text)
    except orjson.JSONDecodeError:
        pass  # a stream of values, or an error the standard decoder reports with its line
    else:
        head = len(text) - len(text.lstrip())
        return [Document(source, 1, whole, text.count("\n", 0, head) + 1, keep)]
    decoder = json.JSONDecoder()
    docs: list[Document] = []
    pos, end = 0, len(text)
    ws = re.compile(r"\s*")
    pos = ws.match(text, pos).end()  # type: ignore[union-attr]
    line, counted = 1, 0
    while pos < end:
        line += text.count("\n", counted, pos)
        counted = pos
        try:
            obj, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as e:
            raise InputError(f"invalid JSON: {e.msg} (line {e.lineno}, column {e.colno})", file=source,
                             line=e.lineno) from None
        except RecursionError:
            raise InputError("invalid JSON: nested too deeply", file=source, doc=len(docs) + 1, line=line) from None
        except ValueError as e:  # an integer with more digits than Python converts
            detail = "an integer with too many digits" if "digits" in str(e) else str(e)
            raise InputError(f"invalid JSON: {detail}", file=source, doc=len(docs) + 1, line=line) from None
        docs.append(Document(source, len(docs) + 1, obj, line, keep))
        pos = ws.match(text, pos).end()  # type: ignore[union-attr]
    return docs


def _yaml_error(e: yaml.YAMLError, source: str) -> InputError:
    mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
    line = mark.line + 1 if mark is not None else None
    problem = getattr(e, "problem", None) or str(e).splitlines()[0]
    context = getattr(e, "context", None)
    column = f" (column {mark.column + 1})" if mark is not None else ""
    return InputError(f"invalid YAML: {context + ', ' if context else ''}{problem}{column}", file=source, line=line)


def _parse_yaml(text: str, source: str) -> Iterator[Document]:
    try:
        _check_yaml_size(text, source)
        keep = text if len(text) <= LOCATE_MAX_CHARS else None
        loader = _Loader(text)
        try:
            index = 0
            while loader.check_node():
                node = loader.get_node()
                index += 1
                if node is None:
                    continue
                line = node.start_mark.line + 1
                try:
                    obj = loader.construct_document(node)
                except (ValueError, TypeError, OverflowError) as e:  # e.g. an integer of 5000 digits
                    detail = "an integer with too many digits" if "digits" in str(e) else str(e)
                    raise InputError(f"invalid YAML: cannot read a value: {detail}", file=source, doc=index,
                                     line=line) from None
                yield Document(source, index, obj, line, keep)
        finally:
            loader.dispose()
    except yaml.YAMLError as e:
        raise _yaml_error(e, source) from None


_DOC = 2
_DEPTH_DELTA = {yaml.SequenceStartEvent: 1, yaml.MappingStartEvent: 1, yaml.SequenceEndEvent: -1,
                yaml.MappingEndEvent: -1, yaml.DocumentStartEvent: _DOC}


def _check_yaml_size(text: str, source: str) -> None:
    """Refuse alias bombs and absurd nesting before anything is composed.

    One pass over the parser's events (libyaml's parser keeps its own stack; only the composer
    recurses): a document nested deeper than ``MAX_DEPTH``, aliases that would add more than
    ``MAX_ALIAS_NODES`` nodes when expanded (billion laughs), or an alias to a node that encloses it (a
    recursive structure) is an ``InputError``. Time and memory are linear in the text."""
    ev: Any  # the stubs' Event has no anchor, and an optional start_mark
    if "&" not in text:  # no anchor, hence no alias: only the nesting needs watching (the common case)
        depth = 0
        index = 0
        delta = _DEPTH_DELTA.get
        for ev in yaml.parse(text, Loader=_Loader):
            d = delta(type(ev))
            if d:
                if d == _DOC:
                    index += 1
                    continue
                depth += d
                if depth > MAX_DEPTH:
                    raise InputError(f"nesting deeper than {MAX_DEPTH} levels: not a Kubernetes object",
                                     file=source, doc=index, line=ev.start_mark.line + 1)
        return
    depth = 0
    index = 0
    open_anchors: list[str | None] = []  # anchor of each open collection
    sizes: dict[str, int] = {}  # anchor -> expanded node count (capped)
    counts: list[int] = []  # expanded node count of each open collection (capped)
    alias_nodes = 0
    cap = MAX_ALIAS_NODES + 1
    scalar, alias = yaml.ScalarEvent, yaml.AliasEvent
    starts = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
    ends = (yaml.SequenceEndEvent, yaml.MappingEndEvent)
    for ev in yaml.parse(text, Loader=_Loader):
        cls = type(ev)
        if cls is scalar:
            if ev.anchor is not None:
                sizes[ev.anchor] = 1
            if counts:
                counts[-1] = min(counts[-1] + 1, cap)
        elif cls is alias:
            anchor = ev.anchor
            if anchor in open_anchors:
                raise InputError(f"alias *{anchor} refers to a node that contains it: recursive structures are "
                                 f"not Kubernetes objects", file=source, doc=index, line=ev.start_mark.line + 1)
            n = sizes.get(anchor, 1)  # an undefined alias: the composer reports it
            alias_nodes += n
            if alias_nodes > MAX_ALIAS_NODES:
                raise InputError(f"aliases expand to more than {MAX_ALIAS_NODES} nodes (a YAML alias bomb?): "
                                 f"refused", file=source, doc=index, line=ev.start_mark.line + 1)
            if counts:
                counts[-1] = min(counts[-1] + n, cap)
        elif cls in starts:
            depth += 1
            if depth > MAX_DEPTH:
                raise InputError(f"nesting deeper than {MAX_DEPTH} levels: not a Kubernetes object", file=source,
                                 doc=index, line=ev.start_mark.line + 1)
            open_anchors.append(ev.anchor)
            counts.append(1)
        elif cls in ends:
            depth -= 1
            anchor = open_anchors.pop()
            n = counts.pop()
            if anchor is not None:
                sizes[anchor] = n
            if counts:
                counts[-1] = min(counts[-1] + n, cap)
        elif cls is yaml.DocumentStartEvent:
            index += 1
            sizes.clear()  # anchors are local to a document


def iter_objects(docs: Iterable[Document]) -> Iterator[tuple[Document, dict, str]]:
    """Every Kubernetes object, with ``*List`` documents flattened; yields (doc, object, where)."""
    errors: list[InputError] = []
    for doc in docs:
        if doc.obj is None:
            continue
        yield from _flatten(doc, doc.obj, "", errors)
    _raise(errors)


def _flatten(doc: Document, obj: object, where: str, errors: list[InputError]) -> Iterator[tuple[Document, dict, str]]:
    """Objects of a document in order: a list of objects and ``*List`` kinds are flattened (without
    recursion: a JSON document may nest lists as deep as the JSON decoder allows)."""
    stack: list[tuple[object, str]] = [(obj, where)]
    while stack:
        obj, where = stack.pop()
        if isinstance(obj, list):
            stack.extend(reversed([(item, f"{where}[{i}]") for i, item in enumerate(obj)]))
            continue
        if not isinstance(obj, Mapping):
            text = repr(obj)
            text = text if len(text) <= 40 else text[:37] + "..."
            errors.append(InputError(f"expected a Kubernetes object (a mapping with apiVersion, kind and "
                                     f"metadata), got {type(obj).__name__} {text}", file=doc.source, doc=doc.index,
                                     line=_locate(doc, where), obj=where or None))
            continue
        kind = obj.get("kind")
        if isinstance(kind, str) and kind.endswith("List") and "items" in obj:
            items = obj.get("items")
            path = _join(where, "items")
            if items is None:
                continue
            if not isinstance(items, list):
                errors.append(InputError(f"expected a list of objects, got {type(items).__name__}", file=doc.source,
                                         doc=doc.index, line=_locate(doc, path), obj=kind, field=path))
                continue
            item_kind = kind[:-4] if kind != "List" else None
            expanded = []
            for i, item in enumerate(items):
                if isinstance(item, Mapping) and item_kind and "kind" not in item:
                    item = {**item, "kind": item_kind, "apiVersion": obj.get("apiVersion", "v1")}
                expanded.append((item, f"{path}[{i}]"))
            stack.extend(reversed(expanded))
            continue
        yield doc, obj, where  # type: ignore[misc]


def _join(where: str, field: str | None) -> str:
    if not field:
        return where
    if not where:
        return field
    return f"{where}{field}" if field.startswith("[") else f"{where}.{field}"


# ================================================================================================ lines

_located: dict[tuple[int, int], tuple[str, yaml.Node | None]] = {}  # cleared after every load


def _locate(doc: Document, path: str | None) -> int | None:
    """The line of ``path`` (``items[3].spec.containers[0].image``) in ``doc``, or of its nearest
    ancestor that exists, or the document's line. Only errors pay for this: the document is composed
    again from the text."""
    if not path or doc.text is None:
        return doc.line
    node = _document_node(doc)
    if node is None:
        return doc.line
    return _line_of(node, path)


def _document_node(doc: Document) -> yaml.Node | None:
    key = (id(doc.text), doc.index)
    hit = _located.get(key)
    if hit is not None and hit[0] is doc.text:
        return hit[1]
    if len(_located) > 64:
        _located.clear()
    node = None
    try:
        loader = _Loader(doc.text)
        try:
            i = 0
            while loader.check_node():
                n = loader.get_node()
                i += 1
                if i == doc.index:
                    node = n
                    break
        finally:
            loader.dispose()
    except Exception:
        node = None
    _located[key] = (doc.text, node)  # type: ignore[assignment]
    return node


_INDEX = re.compile(r"\[(\d+)\]\.?")


def _line_of(node: yaml.Node, path: str) -> int:
    line = node.start_mark.line + 1
    rest = path
    while rest:
        if isinstance(node, yaml.SequenceNode):
            m = _INDEX.match(rest)
            if not m or int(m.group(1)) >= len(node.value):
                break
            node = node.value[int(m.group(1))]
            rest = rest[m.end():]
        elif isinstance(node, yaml.MappingNode):
            best: tuple[str, yaml.Node] | None = None
            for k, v in node.value:
                key = k.value if isinstance(k, yaml.ScalarNode) else None
                if isinstance(key, str) and key and (rest == key or rest.startswith((key + ".", key + "["))):
                    if best is None or len(key) > len(best[0]):
                        best = (key, v)
            if best is None:
                break
            node = best[1]
            rest = rest[len(best[0]):]
            if rest.startswith("."):
                rest = rest[1:]
        else:
            break
        line = node.start_mark.line + 1
    return line


# ================================================================================================ cluster

def load_snapshot(paths: Iterable[str], max_bytes: int = DEFAULT_MAX_BYTES, *, strict: bool = False) -> Cluster:
    """Read, parse and admit every object of the given files and folders.

    ``max_bytes`` limits each file (and its decompressed size); ``strict`` refuses unknown fields of Pods
    and Nodes and label values the API server would reject."""
    try:
        return _load(paths, max_bytes, strict)
    finally:
        _located.clear()


def _load(paths: Iterable[str], max_bytes: int, strict: bool) -> Cluster:
    files = expand_paths(paths)
    errors: list[InputError] = []
    raw_objects: list[tuple[Document, dict, str]] = []
    embedded: list[tuple[str, dict, list[str]]] = []
    empty: list[str] = []
    for f in files:
        source = "<stdin>" if f == "-" else f
        before = len(raw_objects)
        try:
            text = read_source(f, max_bytes)
            for doc in parse_documents(text, source):
                if isinstance(doc.obj, Mapping) and is_export(doc.obj):  # a kube-scheduler-simulator export
                    for where, item in export_objects(doc.obj):
                        raw_objects.extend(_flatten(doc, item, where, errors))
                    cfg, cfg_warnings = export_config(doc.obj, source)
                    if cfg is not None:
                        embedded.append((source, cfg, cfg_warnings))
                elif doc.obj is not None:
                    raw_objects.extend(_flatten(doc, doc.obj, "", errors))
        except InputError as e:
            errors.append(e)
            continue
        if len(raw_objects) == before:
            empty.append(source)
    if not raw_objects and not errors:
        where = files[0] if len(files) == 1 else f"{len(files)} files"
        raise InputError("snapshot holds no objects: expected Kubernetes objects such as Nodes and Pods "
                         "(kubectl get nodes,pods -A -o yaml)", file="<stdin>" if where == "-" else where)
    cluster = build_cluster(raw_objects, strict=strict, errors=errors)
    cluster.sources = files
    if embedded:
        source, cluster.embedded_config, cfg_warnings = embedded[0]
        cluster.embedded_config_source = f"{source}: schedulerConfig"
        cluster.embedded_config_warnings = cfg_warnings
        if len(embedded) > 1:
            cluster.warnings.append(f"{len(embedded)} simulator exports carry a schedulerConfig: the first, from "
                                    f"{source}, is used unless --config is given")
    for source in empty:
        cluster.warnings.append(f"{source}: holds no objects")
    return cluster


def _describe(obj: Mapping) -> str:
    """``Pod team-a/web-1``, ``Node n1``: what error messages call the object."""
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), Mapping) else {}
    name = meta.get("name")  # type: ignore[union-attr]
    name = name if isinstance(name, str) and name else "<unnamed>"
    kind = obj.get("kind")
    kind = kind if isinstance(kind, str) and kind else "object"
    if kind in CLUSTER_SCOPED or (kind not in USED_KINDS and not meta.get("namespace")):  # type: ignore[union-attr]
        return f"{kind} {name}"
    ns = meta.get("namespace")  # type: ignore[union-attr]
    return f"{kind} {ns if isinstance(ns, str) and ns else 'default'}/{name}"


class _Problems:
    """Errors of objects, rendered with their line only when they are raised; warnings aggregated."""

    def __init__(self, errors: list[InputError]) -> None:
        self.errors = errors
        self.extra = 0
        self.unknown: dict[tuple[str, str], list] = {}  # (kind, field pattern) -> [count, first where, hint]
        self.bad_values: dict[str, list] = {}  # kind -> [count, first message]

    def full(self) -> bool:
        return len(self.errors) >= MAX_ERRORS

    def add(self, doc: Document, where: str, obj: Mapping, message: str, fieldpath: str | None = None) -> None:
        if self.full():
            self.extra += 1
            return
        desc = _describe(obj)
        self.errors.append(InputError(message, file=doc.source, doc=doc.index, line=_locate(doc, _join(where, fieldpath)),
                                      obj=desc, field=fieldpath))

    def raise_if_any(self) -> None:
        order: dict[str | None, int] = {}
        for e in self.errors:
            order.setdefault(e.file, len(order))
        errors = sorted(self.errors, key=lambda e: (order[e.file], e.doc or 0, e.line or 0))
        if self.extra:
            errors.append(InputError(f"... and {self.extra} more error(s); only the first {MAX_ERRORS} are shown"))
        _raise(errors)


def _raise(errors: list[InputError]) -> None:
    if errors:
        raise errors[0] if len(errors) == 1 else InputErrors(errors)


def build_cluster(objects: list[tuple[Document, dict, str]], *, strict: bool = False,
                  errors: list[InputError] | None = None) -> Cluster:
    """Parse and admit objects; raises every problem found (with ``errors`` found earlier) together."""
    cluster = Cluster()
    problems = _Problems(list(errors or []))
    seen: dict[tuple, tuple[Document, str]] = {}
    ignored: dict[str, int] = {}
    pods_raw: list[tuple[Document, dict, str]] = []
    latest = ""  # the latest creationTimestamp text seen (RFC 3339 UTC text sorts as time)

    for doc, obj, where in objects:
        fail = _failer(problems, doc, where, obj)
        kind, api = obj.get("kind"), obj.get("apiVersion")
        if not isinstance(kind, str) or not kind:
            fail("required: the object's kind (Pod, Node, ...); this is not a Kubernetes object", "kind")
            continue
        if not isinstance(api, str) or not api:
            fail(f"required: the object's apiVersion ({(API_VERSIONS.get(kind) or ('v1',))[0]} for a {kind})",
                 "apiVersion")
            continue
        meta = obj.get("metadata")
        if isinstance(meta, Mapping):
            stamp = meta.get("creationTimestamp")
            if isinstance(stamp, str) and stamp > latest:
                latest = stamp
        if kind == "Pod" and isinstance(meta, Mapping) and not meta.get("name") \
                and isinstance(meta.get("generateName"), str) and meta.get("generateName"):
            if _api_checks(problems, doc, where, obj, kind, strict):
                pods_raw.append((doc, obj, where))  # named below, once every given name is known
            continue
        if not isinstance(meta, Mapping) or not isinstance(meta.get("name"), str) or not meta.get("name"):
            fail("required: a non-empty string", "metadata.name")
            continue
        if kind not in USED_KINDS:
            near = [k for k in USED_KINDS if k.lower() == kind.lower()]
            if near:
                fail(f"unknown kind {kind!r}: kinds are case-sensitive (did you mean {near[0]!r}?)", "kind")
                continue
            label = f"{api}/{kind}"
            ignored[label] = ignored.get(label, 0) + 1
            continue
        served = API_VERSIONS.get(kind)
        if served and api not in served:
            fail(f"{kind} is not served as {api!r} by Kubernetes v1.34: expected apiVersion {served[0]!r}",
                 "apiVersion")
            continue
        namespaced = kind not in CLUSTER_SCOPED
        ns = meta.get("namespace")
        ident = (kind, (ns if isinstance(ns, str) and ns else "default") if namespaced else "", meta["name"])
        if ident in seen:
            first_doc, first_where = seen[ident]
            line = _locate(first_doc, first_where)
            at = f"{first_doc.source}{f':{line}' if line else ''} (document {first_doc.index})"
            fail(f"duplicate object: already defined at {at}")
            continue
        seen[ident] = (doc, where)
        if not _api_checks(problems, doc, where, obj, kind, strict):
            continue
        try:
            if kind == "Pod":
                pods_raw.append((doc, obj, where))
            elif kind == "Node":
                cluster.nodes.append(parse_node(obj))
            elif kind == "Namespace":
                ns_obj = parse_namespace(obj)
                cluster.namespaces[ns_obj.name] = ns_obj
            elif kind == "PriorityClass":
                pc = parse_priority_class(obj)
                cluster.priority_classes[pc.name] = pc
            elif kind == "PodDisruptionBudget":
                cluster.pdbs.append(parse_pdb(obj))
            elif kind in STORAGE_KINDS:
                _add_storage(cluster, kind, obj)
            elif kind in DRA_KINDS:
                cluster.dra.add(kind, obj)
            elif kind == "LimitRange":
                cluster.limit_ranges.append(parse_limit_range(obj))
            else:
                w = parse_workload(obj, kind)
                w.index = len(cluster.workload_order)
                cluster.workloads.setdefault(kind, []).append(w)
                cluster.workload_order.append(w)
        except FieldError as e:
            fail(e.message, e.path)

    for label in sorted(ignored):
        cluster.ignored_kinds.append(label)
        cluster.warnings.append(f"ignored {ignored[label]} object(s) of kind {label}: not used by the scheduler")

    cluster.latest_timestamp = latest
    pods_raw = _name_generated_pods(cluster, pods_raw)
    pods = []
    for i, (doc, obj, where) in enumerate(pods_raw):
        try:
            pods.append(parse_pod(obj, i))
            validate_pod(obj)
        except FieldError as e:
            problems.add(doc, where, obj, e.message, e.path)
    _located.clear()
    problems.raise_if_any()
    _warn_aggregated(cluster, problems)
    admit_loaded_pods(cluster, pods)
    if not any(k in cluster.workloads for k in EXPANDED_KINDS):
        _warn_nothing_to_do(cluster)  # else the controllers layer says what expansion left to do
    return cluster


EXPANDED_KINDS = ("Deployment", "ReplicaSet", "ReplicationController", "StatefulSet", "DaemonSet", "Job", "CronJob")


def _name_generated_pods(cluster: Cluster, pods_raw: list[tuple[Document, dict, str]]
                         ) -> list[tuple[Document, dict, str]]:
    """Pods with only ``generateName`` get their name as the API server would give it (deterministic, in
    document order); the object is copied, never changed. The counters carry on into the controllers."""
    given = {(_ns_of(obj), obj["metadata"]["name"]) for _, obj, _ in pods_raw if obj["metadata"].get("name")}
    names = NameGenerator(lambda ns, name: (ns, name) in given)
    out = []
    for doc, obj, where in pods_raw:
        meta = obj["metadata"]
        if not meta.get("name"):
            ns = _ns_of(obj)
            name = names.generate(ns, meta["generateName"])
            given.add((ns, name))
            obj = {**obj, "metadata": {**meta, "name": name}}
        out.append((doc, obj, where))
    cluster.name_counters = dict(names.counters)
    return out


def _ns_of(obj: Mapping) -> str:
    ns = obj["metadata"].get("namespace")
    return ns if isinstance(ns, str) and ns else "default"


def _add_storage(cluster: Cluster, kind: str, obj: Mapping) -> None:
    if kind == "PersistentVolume":
        cluster.pvs.append(parse_pv(obj))
    elif kind == "PersistentVolumeClaim":
        cluster.pvcs.append(parse_pvc(obj))
    elif kind == "StorageClass":
        sc = parse_storage_class(obj)
        cluster.storage_classes[sc.name] = sc
        ann = obj["metadata"].get("annotations") or {}
        if isinstance(ann, Mapping) and "true" in (ann.get("storageclass.kubernetes.io/is-default-class"),
                                                   ann.get("storageclass.beta.kubernetes.io/is-default-class")):
            cluster.default_class_candidates.append((str(obj["metadata"].get("creationTimestamp") or ""), sc.name))
    elif kind == "CSINode":
        cn = parse_csi_node(obj)
        cluster.csi_nodes[cn.name] = cn
    elif kind == "CSIDriver":
        cd = parse_csi_driver(obj)
        cluster.csi_drivers[cd.name] = cd
    elif kind == "VolumeAttachment":
        cluster.volume_attachments.append(parse_volume_attachment(obj))
    else:
        cluster.csi_storage_capacities.append(parse_csi_storage_capacity(obj))


def _failer(problems: _Problems, doc: Document, where: str, obj: Mapping):
    def fail(message: str, fieldpath: str | None = None) -> None:
        problems.add(doc, where, obj, message, fieldpath)
    return fail


def _api_checks(problems: _Problems, doc: Document, where: str, obj: Mapping, kind: str, strict: bool) -> bool:
    """What the API server checks and the parser does not: label syntax, unknown fields (Pod, Node).
    False when an error was recorded."""
    ok = True
    meta = obj["metadata"]
    labels = meta.get("labels")
    if isinstance(labels, Mapping):
        for k, v in labels.items():
            kerr = label_key_error(k)
            if kerr:
                problems.add(doc, where, obj, kerr, f"metadata.labels.{k}")
                ok = False
                continue
            verr = label_value_error(v) if isinstance(v, str) else None
            if verr:
                if strict:
                    problems.add(doc, where, obj, verr, f"metadata.labels.{k}")
                    ok = False
                else:
                    entry = problems.bad_values.setdefault(kind, [0, f"{_describe(obj)}: metadata.labels.{k}: {verr}"])
                    entry[0] += 1
    if kind not in ("Pod", "Node"):
        return ok
    checks: list[tuple[object, str, str, tuple[str, ...]]] = [(obj, "", "", OBJECT_FIELDS),
                                                               (meta, "metadata", "metadata", METADATA_FIELDS)]
    spec = obj.get("spec")
    if isinstance(spec, Mapping):
        checks.append((spec, "spec", "spec", POD_SPEC_FIELDS if kind == "Pod" else NODE_SPEC_FIELDS))
        if kind == "Pod":
            for part in ("initContainers", "containers"):
                items = spec.get(part)
                for i, c in enumerate(items if isinstance(items, list) else []):
                    checks.append((c, f"spec.{part}[{i}]", f"spec.{part}[]", CONTAINER_FIELDS))
    for body, path, pattern, known in checks:
        if not isinstance(body, Mapping):
            continue
        for key in body:
            if key in known:
                continue
            near = difflib.get_close_matches(str(key), known, n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            fieldpath = _join(path, str(key))
            if strict:
                problems.add(doc, where, obj, f"unknown field {str(key)!r}{hint} (strict mode)", fieldpath)
                ok = False
            else:
                entry = problems.unknown.setdefault((kind, _join(pattern, str(key))), [0, _describe(obj), hint])
                entry[0] += 1
    return ok


def _warn_aggregated(cluster: Cluster, problems: _Problems) -> None:
    for (kind, field), (count, first, hint) in problems.unknown.items():
        more = f" and {count - 1} more {kind}(s)" if count > 1 else ""
        cluster.warnings.append(f"{first}{more}: unknown field {field}{hint} ignored, as the API server ignores "
                                f"unknown fields (--strict makes it an error)")
    for kind, (count, first) in problems.bad_values.items():
        more = f" ({count - 1} more such label(s) in {kind}s)" if count > 1 else ""
        cluster.warnings.append(f"{first}{more}: the API server would reject it; used as given "
                                f"(--strict makes it an error)")


def _warn_nothing_to_do(cluster: Cluster) -> None:
    pending = sum(1 for p in cluster.pods if not p.node_name)
    if pending and not cluster.nodes:
        cluster.warnings.append(f"the snapshot holds no nodes: all {pending} pending pod(s) will be unschedulable")
    elif not pending:
        bound = len(cluster.pods)
        detail = f"{bound} pod(s) bound to nodes" if bound else "no pods"
        if cluster.rejected_pods:
            detail += f", {len(cluster.rejected_pods)} rejected by admission"
        cluster.warnings.append(f"nothing to do: the snapshot holds no pending pods ({detail})")
