"""Read snapshots: files, folders and stdin holding YAML or JSON as ``kubectl get -o yaml|json`` prints.

Objects are parsed into the model and admitted as the API server would have admitted them before the
scheduler saw them (priority from the PriorityClass, defaults already applied by the model).

Bad input is an ``InputError`` naming the file, the document, the line (YAML), the object and the field
path; the problems of all files are collected and reported together (up to ``MAX_ERRORS``). Reading is
bounded: files over ``max_bytes`` are refused, gzip is decompressed to at most ``max_bytes``, and every
YAML stream is checked event by event *before* it is composed, so that alias bombs and absurd nesting
are refused in time proportional to the text (libyaml's composer recurses in C and would crash the
interpreter on deep nesting).

Every object of a kind the v1.34 schema knows is checked field by field at any depth (``validation``):
with ``validate="warn"`` (the default, as kubectl's) unknown or mistyped fields, invalid names and label
values are warnings with the path and a "did you mean"; ``strict`` makes them errors; ``ignore`` skips.
"""

from __future__ import annotations

import gc
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from itertools import compress, repeat
from operator import eq
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pysched.errors import InputError, InputErrors
from pysched.lazyclass import dataclass
from pysched.model.labels import label_key_error, label_value_error, labels_known_valid
from pysched.model.objects import FieldError, Pod, PodParser
from pysched.model.timeutil import prime as prime_times
from pysched.snapshot import reader, validation
from pysched.snapshot.admission import admit_loaded_pods
from pysched.snapshot.cluster import Cluster
from pysched.snapshot.kinds import BY_KIND, CLUSTER_SCOPED, KINDS, POD_CREATING
from pysched.snapshot.names import NameGenerator
from pysched.snapshot.reader import (  # noqa: F401 - re-exported: the limits are part of this module's API
    DEFAULT_MAX_BYTES,
    MAX_ALIAS_NODES,
    MAX_DEPTH,
    escape,
)
from pysched.snapshot.simulator import export_config, export_objects, is_export

if TYPE_CHECKING:
    import yaml


def __getattr__(name: str) -> Any:  # ``StrictLoader`` re-exported as before; PyYAML imported on first use
    if name in ("StrictLoader", "_Loader"):
        return reader.strict_loader()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

SNAPSHOT_SUFFIXES = (".yaml", ".yml", ".json", ".yaml.gz", ".yml.gz", ".json.gz")
MAX_ERRORS = 20
LOCATE_MAX_CHARS = 128 << 20  # error messages name the line of the field in files up to this size

# the kinds read (one table: pysched.snapshot.kinds); kept under their old names for callers
USED_KINDS = frozenset(BY_KIND)
API_VERSIONS = {k.kind: k.api_versions for k in KINDS}
EXPANDED_KINDS = POD_CREATING


_MAP = (dict, Mapping)  # parsed documents are plain dicts: settled before the ABC check


@dataclass(slots=True)
class Document:
    source: str
    index: int  # 1-based document number within the source
    obj: object
    line: int | None = None
    text: str | None = None  # the whole text of the source (when small enough): errors find a field's line
    exact: bool = False  # read by orjson (``reader.json_values``): equal writings by orjson mean equal values


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
    """The text of a file ('-' = stdin), gzip-decompressed when it is gzip; bounded (see ``reader``)."""
    return reader.read_text(path, max_bytes, stdin_hint="pipe a snapshot in "
                            "(kubectl get nodes,pods -A -o yaml | pysched simulate -)")


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
    from pysched.snapshot.blockyaml import read_block_text  # (here: a JSON run does not import it)

    fast = read_block_text(text)
    if fast is not None:
        keep = text if len(text) <= LOCATE_MAX_CHARS else None
        for index, (obj, line) in enumerate(fast, 1):
            yield Document(source, index, obj, line, keep)
        return
    yield from _parse_yaml(text, source)


def _parse_json_documents_in_yaml(text: str, source: str) -> list[Document] | None:
    """A YAML stream some of whose documents are JSON (``kubectl get -o json`` outputs joined with
    ``---``): those documents are parsed as JSON, many times faster; the others as YAML. None when the
    stream holds no JSON document, or one that does not parse as JSON (the YAML path then reports)."""
    seps = reader.document_separators(text)
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
    index = 0  # documents of the file so far, numbered as PyYAML numbers those of the whole stream
    for n, (offset, chunk) in enumerate(chunks):
        first_line += text.count("\n", counted, offset)  # counted once per stretch: linear in the text
        counted = offset
        body = chunk.lstrip()
        if body.startswith("{"):
            try:
                obj = reader.strict_json_loads(chunk)
            except (ValueError, RecursionError, reader.JsonDuplicate):
                return None  # the YAML path reads the stream again and names the culprit and its lines
            line = first_line + chunk.count("\n", 0, len(chunk) - len(body))
            index += 1
            docs.append(Document(source, index, obj, line, keep))
            continue
        start = index
        for d in _parse_yaml(chunk, source, first_line - 1, doc_offset=start):
            index = d.index
            docs.append(Document(source, d.index, d.obj, d.line, keep))
        if n and index == start:
            index += 1  # a separator followed by nothing: an empty document of the stream
    return docs


def _parse_json(text: str, source: str) -> list[Document]:
    keep = text if len(text) <= LOCATE_MAX_CHARS else None
    read: list[bool] = []
    values = list(reader.json_values(text, source, exact=read))
    exact = bool(read) and read[0]
    return [Document(source, index, obj, line, keep, exact) for index, obj, line in values]


def _parse_yaml(text: str, source: str, line_offset: int = 0, doc_offset: int = 0) -> Iterator[Document]:
    keep = text if len(text) <= LOCATE_MAX_CHARS else None
    for index, obj, line in reader.yaml_documents(text, source, line_offset=line_offset, doc_offset=doc_offset):
        yield Document(source, index, obj, line, keep)


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
        if not isinstance(obj, _MAP):
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
            first = 0
            if item_kind is None:
                # the items are what the stack would take next: the leading ones that are objects but no
                # list to flatten (nearly all) are yielded at once, the rest stacked as before
                first = _leading_objects(items)
                if first:
                    # (one comprehension for the paths, C-level passes for the rest: no Python step per item
                    # but the path's f-string, cheaper than str.format's; zip stops with the paths)
                    yield from zip(repeat(doc), items, [f"{path}[{i}]" for i in range(first)])
            expanded = []
            for i, item in enumerate(items[first:] if first else items, first):
                if isinstance(item, _MAP) and item_kind and "kind" not in item:
                    item = {**item, "kind": item_kind, "apiVersion": obj.get("apiVersion", "v1")}
                expanded.append((item, f"{path}[{i}]"))
            stack.extend(reversed(expanded))
            continue
        yield doc, obj, where  # type: ignore[misc]


def _leading_objects(items: list) -> int:
    """How many of ``items``, from the first, are dicts that are no ``*List`` holding ``items`` (what
    ``_flatten`` yields as they are). Judged for all at once where every item is a dict whose kind is a
    string and no kind holds ``List`` anywhere (one join of them, no hashing); else item by item."""
    get: Any = dict.get
    if _DICT_ONLY.issuperset(map(type, items)):
        try:
            kinds = "".join(map(get, items, repeat("kind")))
        except TypeError:  # a kind that is no string (absent: None): item by item
            kinds = "List"
        if "List" not in kinds:
            return len(items)
    n = 0
    for item in items:
        if type(item) is not dict:
            break
        k = item.get("kind")
        if isinstance(k, str) and k.endswith("List") and "items" in item:
            break
        n += 1
    return n


_DICT_ONLY = frozenset((dict,))


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
        loader = reader.strict_loader()(doc.text or "")
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
    import yaml

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
            best: tuple[str, yaml.Node, yaml.Node] | None = None
            for k, v in node.value:
                key = k.value if isinstance(k, yaml.ScalarNode) else None
                if isinstance(key, str) and key and (rest == key or rest.startswith((key + ".", key + "["))):
                    if best is None or len(key) > len(best[0]):
                        best = (key, k, v)
            if best is None:
                break
            node = best[2]
            rest = rest[len(best[0]):]
            if rest.startswith("."):
                rest = rest[1:]
            line = best[1].start_mark.line + 1  # the key's line: a value may start lines below it
            continue
        else:
            break
        line = node.start_mark.line + 1
    return line


# ================================================================================================ cluster

def validation_mode(strict: bool = False, validate: str | None = None) -> str:
    """``--validate`` as kubectl spells it; ``--strict`` is ``--validate=strict``; the default is ``warn``."""
    mode = validate or ("strict" if strict else "warn")
    if mode not in validation.MODES:
        raise InputError(f"--validate must be one of {', '.join(validation.MODES)}, not {reader.echo(mode)}")
    return mode


def load_snapshot(paths: Iterable[str], max_bytes: int = DEFAULT_MAX_BYTES, *, strict: bool = False,
                  validate: str | None = None) -> Cluster:
    """Read, parse and admit every object of the given files and folders.

    ``max_bytes`` limits each file (and its decompressed size); ``validate`` (``strict``, ``warn`` (the
    default), ``ignore``; ``strict=True`` means ``strict``) says what unknown or mistyped fields at any
    depth, invalid names and label values the API server would reject are: errors, warnings, or nothing."""
    try:
        with collector_paused():
            return _load(paths, max_bytes, validation_mode(strict, validate))
    finally:
        _located.clear()


#: objects a load must leave behind (net of those freed) for the collector to freeze them afterwards:
#: about 1,500 pods; a 1,000-node, 3,200-pod snapshot leaves ~117,000 and its simulation otherwise pays a
#: full collection over them (~0.1 s) plus young collections that walk them again
FREEZE_ABOVE = 50_000

#: whether a load has frozen the collector's objects (``collector_paused``). Only such a freeze can hold an
#: earlier cluster that has become garbage; what the command line froze after its imports cannot
_load_froze = False


def load_froze() -> bool:
    """Whether the collector's frozen objects hold a loaded cluster (the last load froze what was alive)."""
    return _load_froze


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused while a snapshot is read and parsed.

    A load builds millions of containers that all live on (the parsed text and the model), and the
    collector would traverse them again every time the heap grows by a quarter: on a 5,000-node
    snapshot that was half of the load's CPU. The load itself makes no cyclic garbage worth collecting.
    After a large load (``FREEZE_ABOVE`` new objects) everything alive is moved to the permanent
    generation (``gc.freeze``): the collections that the simulation's allocations trigger then skip the
    loaded cluster instead of walking it again; cycles among frozen objects are never collected, which
    for a loaded cluster (kept for the whole run) costs nothing, and the next load unfreezes and collects
    first. Nested uses and a collector already disabled by the caller are left as they are."""
    if not gc.isenabled():
        yield
        return
    global _load_froze
    if _load_froze and gc.get_freeze_count():
        # an earlier load in this process (tests, a second snapshot) froze what was alive then; what has
        # become garbage since must be collected now, not frozen again with this load
        gc.unfreeze()
        gc.collect()
    _load_froze = False
    gc.disable()
    ok = False
    try:
        yield
        ok = True
    finally:
        gc.enable()
        if ok and gc.get_count()[0] > FREEZE_ABOVE:
            gc.freeze()
            _load_froze = True


def _load(paths: Iterable[str], max_bytes: int, mode: str) -> Cluster:
    files = expand_paths(paths)
    errors: list[InputError] = []
    raw_objects: list[tuple[Document, dict, str]] = []
    embedded: list[tuple[str, dict, list[str]]] = []
    empty: list[str] = []
    exact = True  # every document was read by orjson (``Document.exact``)
    for f in files:
        source = "<stdin>" if f == "-" else f
        before = len(raw_objects)
        try:
            text = read_source(f, max_bytes)
            for doc in parse_documents(text, source):
                exact = exact and doc.exact
                if isinstance(doc.obj, _MAP) and is_export(doc.obj):  # a kube-scheduler-simulator export
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
    cluster = build_cluster(raw_objects, validate=mode, errors=errors, parsed=True, exact=exact)
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
        self.unknown: dict[tuple[str, str, str], list] = {}  # (kind, pattern, unknown?) -> [count, first, path, message]
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
                  errors: list[InputError] | None = None, validate: str | None = None,
                  parsed: bool = False, exact: bool = False) -> Cluster:
    """Parse and admit objects; raises every problem found (with ``errors`` found earlier) together.
    ``parsed``: the objects are as a JSON or YAML reader made them (plain dicts, lists, strings, numbers),
    which lets the schema check take cheaper tests (``validation.Validator``). ``exact``: orjson read
    them all (``Document.exact``): pods' specs that orjson writes alike are equal without comparing them
    (``PodParser.expect``)."""
    mode = validation_mode(strict, validate)
    cluster = Cluster()
    problems = _Problems(list(errors or []))
    seen: dict[tuple, tuple[Document, dict, str]] = {}  # identity -> the first item that has it
    ignored: dict[str, int] = {}
    pods_raw: list[tuple[Document, dict, str]] = []
    pods_clean: list[bool] = []  # per pod of pods_raw: the schema check found it clean (labels valid)
    latest = ""  # the latest creationTimestamp text seen (RFC 3339 UTC text sorts as time)
    unnamed = False  # a pod with only generateName is queued
    # the schema check of many objects at once first: the clean ones (nearly all) are then not walked;
    # clean[position] is 1 for those
    clean = None
    fields: tuple[list[Any], list[Any], list[Any], list[Any] | None] | None = None
    objs = [obj for _, obj, _ in objects]
    if mode != "ignore" and parsed:  # plain dicts: each object's kind, apiVersion and metadata (and its
        # name) read once, for the schema check and for the checks below, by C-level passes
        fields = _fields(objs)
    stamps = _prime_times(objs, None if fields is None else fields[2])
    # the pods' specs looked up as the parser looks them up, before anything is checked: a spec equal to an
    # earlier pod's is parsed once, and checked against the schema once (``repeats``: position of such a
    # pod -> position of the pod that had its spec first)
    parser = PodParser()
    repeats = parser.expect(objs, _pod_positions(objs, None if fields is None else fields[0]), exact)
    pods_at: list[int] = []  # per pod of pods_raw: its position among the objects
    if mode != "ignore":
        clean = validation.Validator(objs, plain=parsed, fields=fields, same_spec=repeats,
                                     stamps=stamps).flags()
    kinds, apis, metas, names = fields or ([], [], [], None)

    for position, item in enumerate(objects):
        doc, obj, where = item
        if fields is None:
            kind, api, meta = obj.get("kind"), obj.get("apiVersion"), obj.get("metadata")
        else:
            kind, api, meta = kinds[position], apis[position], metas[position]
        if names is None:
            name = meta.get("name") if type(meta) is dict else None
        else:
            name = names[position]
        if type(name) is str and name and type(kind) is str and kind and type(api) is str and api:
            # the usual object (plain metadata, a name, kind and apiVersion strings): it passes every check
            # below up to the kind's, so only the latest timestamp is taken here
            stamp = meta.get("creationTimestamp")  # type: ignore[union-attr]
            if isinstance(stamp, str) and stamp > latest:
                latest = stamp
        else:
            # anything else: each check in its order, with its error
            if not isinstance(kind, str) or not kind:
                problems.add(doc, where, obj, "required: the object's kind (Pod, Node, ...); this is not a "
                             "Kubernetes object", "kind")
                continue
            if not isinstance(api, str) or not api:
                problems.add(doc, where, obj, f"required: the object's apiVersion "
                             f"({(API_VERSIONS.get(kind) or ('v1',))[0]} for a {kind})", "apiVersion")
                continue
            if isinstance(meta, _MAP):
                stamp = meta.get("creationTimestamp")
                if isinstance(stamp, str) and stamp > latest:
                    latest = stamp
            if kind == "Pod" and isinstance(meta, _MAP) and not meta.get("name") \
                    and isinstance(meta.get("generateName"), str) and meta.get("generateName"):
                if _api_checks(problems, doc, where, obj, kind, mode, clean, position):
                    pods_raw.append((doc, obj, where))  # named below, once every given name is known
                    pods_clean.append(clean is not None and clean[position] == 1)
                    pods_at.append(position)
                    unnamed = True
                continue
            if not isinstance(meta, _MAP) or not isinstance(meta.get("name"), str) or not meta.get("name"):
                problems.add(doc, where, obj, "required: a non-empty string", "metadata.name")
                continue
            name = meta["name"]
        spec = BY_KIND.get(kind)  # (USED_KINDS are its keys)
        if spec is None:
            near = [k for k in USED_KINDS if k.lower() == kind.lower()]
            if near:
                problems.add(doc, where, obj, f"unknown kind {kind!r}: kinds are case-sensitive (did you mean "
                             f"{near[0]!r}?)", "kind")
                continue
            label = f"{api}/{kind}"
            ignored[label] = ignored.get(label, 0) + 1
            continue
        served = spec.api_versions  # (API_VERSIONS[kind])
        if served and api not in served:
            problems.add(doc, where, obj, f"{kind} is not served as {api!r} by Kubernetes v1.34: expected "
                         f"apiVersion {served[0]!r}", "apiVersion")
            continue
        if spec.namespaced:
            ns = meta.get("namespace")  # type: ignore[union-attr]
            ident = (kind, ns if isinstance(ns, str) and ns else "default", name)
        else:
            ident = (kind, "", name)
        first = seen.setdefault(ident, item)  # (one lookup: the item itself kept, no tuple made for it)
        if first is not item:
            first_doc, _, first_where = first
            line = _locate(first_doc, first_where)
            at = f"{first_doc.source}{f':{line}' if line else ''} (document {first_doc.index})"
            problems.add(doc, where, obj, f"duplicate object: already defined at {at}")
            continue
        # a clean object (the batch check found it so) passes _api_checks at once: not called for it
        flag = clean is not None and clean[position] == 1
        if not flag and not _api_checks(problems, doc, where, obj, kind, mode, clean, position):
            continue
        if kind == "Pod":
            pods_raw.append(item)  # parsed below, after generated names
            pods_clean.append(flag)
            pods_at.append(position)
            continue
        try:
            spec.add(cluster, obj, flag)
        except FieldError as e:
            problems.add(doc, where, obj, e.message, e.path)

    for label in sorted(ignored):
        cluster.ignored_kinds.append(label)
        cluster.warnings.append(f"ignored {ignored[label]} object(s) of kind {label}: not used by the scheduler")

    cluster.latest_timestamp = latest
    if unnamed:  # (else every pod queued has a name: most snapshots)
        pods_raw = _name_generated_pods(cluster, pods_raw)
    pods: list[Pod] = []
    parse, check, keep = parser.parse, parser.validate, pods.append
    for i, ((doc, obj, where), labels_valid, pos) in enumerate(zip(pods_raw, pods_clean, pods_at, strict=True)):
        try:
            keep(parse(obj, i, labels_valid, pos))
            check(obj)
        except FieldError as e:
            problems.add(doc, where, obj, e.message, e.path)
    _located.clear()
    problems.raise_if_any()
    _warn_aggregated(cluster, problems)
    admit_loaded_pods(cluster, pods)
    if not any(k in cluster.workloads for k in EXPANDED_KINDS):
        _warn_nothing_to_do(cluster)  # else the controllers layer says what expansion left to do
    return cluster


def _fields(objs: list[dict]) -> tuple[list[Any], list[Any], list[Any], list[Any] | None] | None:
    """The kind, apiVersion and metadata of each of ``objs`` (plain dicts), and the metadata's name (None
    when a metadata is no dict); None when an object is no dict after all."""
    get: Any = dict.get
    try:
        kinds, apis, metas = (list(map(get, objs, repeat(field))) for field in ("kind", "apiVersion", "metadata"))
    except TypeError:
        return None
    try:
        names: list[Any] | None = list(map(get, metas, repeat("name")))
    except TypeError:  # (dict.get of a metadata that is no dict)
        names = None
    return kinds, apis, metas, names


def _prime_times(objs: list[Any], metas: list[Any] | None) -> list[Any] | None:
    """The objects' creationTimestamps (``metas``: their metadata, when read already) read all at once
    (``timeutil.prime``): each object has its own, which the model then looks up instead of reading it.
    Returns them as ``dict.get`` read them (None where absent; None when an object or a metadata is no
    dict): the schema check takes them instead of reading them again."""
    get: Any = dict.get
    try:
        if metas is None:
            metas = list(map(get, objs, repeat("metadata")))
        stamps = list(map(get, metas, repeat("creationTimestamp")))
    except TypeError:  # an object or a metadata that is no dict: each timestamp read where it is used
        return None
    prime_times(stamps)
    return stamps


def _pod_positions(objs: list[Any], kinds: list[Any] | None = None) -> Iterator[int]:
    """The positions of the Pods among ``objs`` (``kinds``: their kinds, when read already), found as they
    are asked for (the parser may stop asking early)."""
    if kinds is not None:
        return compress(range(len(kinds)), map(eq, kinds, repeat("Pod")))
    return (i for i, obj in enumerate(objs) if isinstance(obj, _MAP) and obj.get("kind") == "Pod")


def _name_generated_pods(cluster: Cluster, pods_raw: list[tuple[Document, dict, str]]
                         ) -> list[tuple[Document, dict, str]]:
    """Pods with only ``generateName`` get their name as the API server would give it (deterministic, in
    document order); the object is copied, never changed. The counters carry on into the controllers."""
    if all(obj["metadata"].get("name") for _, obj, _ in pods_raw):
        return pods_raw  # (nothing to name: most snapshots)
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


def _api_checks(problems: _Problems, doc: Document, where: str, obj: Mapping, kind: str, mode: str,
                clean: bytearray | None = None, position: int = 0) -> bool:
    """What the API server checks and the parser does not: label syntax, then (unless ``mode`` is
    ``ignore``) every field against the v1.34 schema and the object's name. False when an error was
    recorded."""
    ok = True
    if mode == "ignore":
        issues: list[validation.Issue] = []
        check_values = False
    elif clean is not None and clean[position]:  # the batch check found it clean, its label keys and values
        return True  # valid too
    else:
        issues = validation.validate_object(obj, obj["apiVersion"], kind)  # type: ignore[arg-type]
        check_values = True
    labels = obj["metadata"].get("labels")
    if isinstance(labels, _MAP) and not labels_known_valid(labels, values=check_values):
        for k, v in labels.items():
            kerr = label_key_error(k)
            if kerr:
                problems.add(doc, where, obj, kerr, f"metadata.labels.{k}")
                ok = False
                continue
            verr = label_value_error(v) if isinstance(v, str) and mode != "ignore" else None
            if verr:
                if mode == "strict":
                    problems.add(doc, where, obj, verr, f"metadata.labels.{k}")
                    ok = False
                else:
                    entry = problems.bad_values.setdefault(kind, [0, f"{_describe(obj)}: metadata.labels.{k}: {verr}"])
                    entry[0] += 1
    for issue in issues:
        if mode == "strict":
            problems.add(doc, where, obj, f"{issue.message} (--validate=strict)", issue.path)
            ok = False
        else:
            entry = problems.unknown.setdefault((kind, issue.pattern, str(issue.unknown)),
                                                [0, _describe(obj), issue.path, issue.message])
            entry[0] += 1
    return ok


def _warn_aggregated(cluster: Cluster, problems: _Problems) -> None:
    for (kind, _pattern, _unknown), (count, first, path, message) in problems.unknown.items():
        more = f" and {count - 1} more {kind}(s)" if count > 1 else ""
        what = "ignored, as the API server ignores unknown fields" if message.startswith("unknown field") \
            else "the API server would reject it"
        cluster.warnings.append(f"{escape(first)}{more}: {escape(path)}: {message}: {what} "
                                f"(--validate=strict makes it an error)")
    for kind, (count, first) in problems.bad_values.items():
        more = f" ({count - 1} more such label(s) in {kind}s)" if count > 1 else ""
        cluster.warnings.append(f"{first}{more}: the API server would reject it; used as given "
                                f"(--validate=strict makes it an error)")


#: how a warning that there is nothing to simulate begins; the controllers layer judges again after edits and
#: expansion, replacing this layer's warning
NOTHING_TO_DO = "nothing to do:"


def _warn_nothing_to_do(cluster: Cluster) -> None:
    pending = sum(1 for p in cluster.pods if not p.node_name)
    if pending and not cluster.nodes:
        cluster.warnings.append(f"the snapshot holds no nodes: all {pending} pending pod(s) will be unschedulable")
    elif not pending:
        bound = len(cluster.pods)
        detail = f"{bound} pod(s) bound to nodes" if bound else "no pods"
        if cluster.rejected_pods:
            detail += f", {len(cluster.rejected_pods)} rejected by admission"
        cluster.warnings.append(f"{NOTHING_TO_DO} the snapshot holds no pending pods ({detail})")
