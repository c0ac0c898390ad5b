"""One bounded reader for every YAML/JSON file pysched reads: snapshots, scheduler configurations,
scenario files and kubeconfigs.

Bounds, each refused with an ``InputError`` (or the subclass the caller names) before it costs much:

- only regular files are opened (a FIFO, a socket or a device would block or never end); ``-`` is stdin;
- at most ``max_bytes`` are read, and a gzip file is decompressed in chunks to at most ``max_bytes``,
  refusing early a compression ratio no YAML or JSON reaches (a gzip bomb costs a few MiB, not 1 GiB);
- a YAML stream is checked event by event before it is composed: nesting deeper than ``MAX_DEPTH``,
  aliases expanding to more than ``MAX_ALIAS_NODES`` nodes, and recursive aliases are refused in time
  linear in the text (libyaml's composer recurses in C and would crash the interpreter otherwise);
- a key repeated in one mapping is an error naming both lines, as kubectl's strict decoding does
  (JSON objects included).

Everything here is about bytes and syntax; what the objects mean is the loaders' business.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
import zlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, BinaryIO

if TYPE_CHECKING:
    import yaml

from pysched.errors import InputError
from pysched.safetext import MAX_ECHO, echo, escape

DEFAULT_MAX_BYTES = 1 << 30
MAX_DEPTH = 100  # nesting of one document; Kubernetes objects stay far below
TOO_DEEP = f"nesting deeper than {MAX_DEPTH} levels: no Kubernetes object or configuration nests so deep"
MAX_ALIAS_NODES = 1_000_000  # nodes that aliases may add to one file when expanded
#: decompressed/compressed ratio refused once the output passes GZIP_RATIO_FLOOR bytes; YAML and JSON
#: dumps of clusters compress 10-40x, a bomb of one repeated byte 1000x
MAX_GZIP_RATIO = 200
GZIP_RATIO_FLOOR = 32 << 20
RAISE_HINT = " (raise it with --max-file-size)"

_INPUT_KIND = {stat.S_IFIFO: "a FIFO (named pipe)", stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device",
               stat.S_IFSOCK: "a socket", stat.S_IFDIR: "a folder"}


# ================================================================================================ bytes

def read_bytes(path: str, max_bytes: int = DEFAULT_MAX_BYTES, *, error: type[InputError] = InputError,
               what: str = "", stdin_hint: str = "", raise_hint: str = RAISE_HINT) -> bytes:
    """The bytes of ``path`` (``-`` = stdin), gunzipped when they are gzip; at most ``max_bytes``.

    ``what`` prefixes messages (``the scheduler configuration``); ``stdin_hint`` says what to pipe in
    when stdin is a terminal; ``raise_hint`` how to raise the limit (empty: it is fixed)."""
    name = "<stdin>" if path == "-" else path
    limit = f"over the limit of {max_bytes} bytes{raise_hint}"
    prefix = f"{what}: " if what else ""
    if path == "-":
        if _isatty(sys.stdin):
            raise error(f"{prefix}reading from stdin, but stdin is a terminal{': ' + stdin_hint if stdin_hint else ''}",
                        file=name)
        data = _read_limited(sys.stdin.buffer, max_bytes, name, error)
    else:
        if "\x00" in path:  # os.open would raise ValueError; no file name holds one (a YAML file can write it)
            raise error(f"{prefix}cannot read: the path contains a NUL character", file=path)
        try:
            # O_NONBLOCK: opening a FIFO must not wait for a writer; the type is checked on the open file
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
        except OSError as e:
            raise error(f"{prefix}cannot read: {e.strerror or e}", file=path) from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                kind = _INPUT_KIND.get(stat.S_IFMT(st.st_mode), "not a regular file")
                raise error(f"{prefix}is {kind}, not a regular file: pass a file, or pipe the data in and "
                            f"give '-' for stdin", file=path)
            if st.st_size > max_bytes:
                raise error(f"{prefix}file is {st.st_size} bytes, {limit}", file=path)
            if hasattr(os, "set_blocking"):
                os.set_blocking(fd, True)
            with os.fdopen(fd, "rb") as f:
                fd = -1
                data = _read_limited(f, max_bytes, path, error)
        except OSError as e:
            raise error(f"{prefix}cannot read: {e.strerror or e}", file=path) from None
        finally:
            if fd >= 0:
                os.close(fd)
    if len(data) > max_bytes:
        raise error(f"{prefix}input is {limit}", file=name)
    if data[:2] == b"\x1f\x8b":
        data = gunzip(data, max_bytes, name, error=error, prefix=prefix, raise_hint=raise_hint)
    return data


def _isatty(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError, OSError):
        return False


def _read_limited(f: BinaryIO, max_bytes: int, name: str, error: type[InputError]) -> bytes:
    """At most ``max_bytes + 1`` bytes; stops early on binary data (an endless stream must not fill memory)."""
    head = f.read(min(8192, max_bytes + 1))
    if b"\x00" in head and not head.startswith((b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff", b"\x1f\x8b")):
        raise error("binary data: expected YAML or JSON text", file=name)
    rest = f.read(max_bytes + 1 - len(head)) if len(head) <= max_bytes else b""
    return head + rest


def gunzip(data: bytes, max_bytes: int, name: str, *, error: type[InputError] = InputError, prefix: str = "",
           raise_hint: str = "") -> bytes:
    """Decompress every gzip member of ``data`` in chunks: at most ``max_bytes`` out, and a ratio above
    ``MAX_GZIP_RATIO`` refused as soon as the output passes ``GZIP_RATIO_FLOOR`` (memory stays near
    the floor for a bomb, whatever ``max_bytes`` is)."""
    out: list[bytes] = []
    total = 0
    pos = 0
    size = len(data)
    view = memoryview(data)
    chunk = 1 << 16
    truncated = "compressed file ended before the end-of-stream marker was reached"
    try:
        while pos < size:
            if data[pos:pos + 2] != b"\x1f\x8b":
                if not data[pos:].strip(b"\x00"):
                    break  # zero padding after the last member, as gzip(1) accepts
                raise error(f"{prefix}not a readable gzip file: trailing garbage after the compressed data",
                            file=name)
            d = zlib.decompressobj(16 + zlib.MAX_WBITS)
            while not d.eof:
                room = max(1, min(1 << 20, max_bytes + 1 - total))
                if d.unconsumed_tail:
                    piece = d.decompress(d.unconsumed_tail, room)
                elif pos < size:
                    piece = d.decompress(view[pos:pos + chunk], room)
                    pos = min(pos + chunk, size)
                else:
                    piece = d.decompress(b"", room)
                    if not piece and not d.eof:
                        raise error(f"{prefix}not a readable gzip file: {truncated}", file=name)
                total += len(piece)
                out.append(piece)
                _check_inflation(total, pos - len(d.unconsumed_tail), max_bytes, name, error, prefix, raise_hint)
            pos -= len(d.unused_data)
    except zlib.error as e:
        raise error(f"{prefix}not a readable gzip file: {e}", file=name) from None
    return b"".join(out)


def _check_inflation(total: int, consumed: int, max_bytes: int, name: str, error: type[InputError],
                     prefix: str, raise_hint: str) -> None:
    if total > max_bytes:
        raise error(f"{prefix}decompressed input is over the limit of {max_bytes} bytes{raise_hint}", file=name)
    if total > GZIP_RATIO_FLOOR and total > MAX_GZIP_RATIO * max(consumed, 1):
        raise error(f"{prefix}gzip data inflates more than {MAX_GZIP_RATIO} times ({consumed} bytes gave over "
                    f"{total} so far): not a YAML or JSON dump (a gzip bomb?); decompress it yourself if it "
                    f"is genuine", file=name)


def decode_text(data: bytes, name: str, *, error: type[InputError] = InputError) -> str:
    """Text from bytes: UTF-8 (a BOM is dropped), or UTF-16/32 with a BOM (PowerShell writes UTF-16)."""
    for bom, codec in ((b"\x00\x00\xfe\xff", "utf-32-be"), (b"\xff\xfe\x00\x00", "utf-32-le"),
                       (b"\xfe\xff", "utf-16-be"), (b"\xff\xfe", "utf-16-le")):
        if data.startswith(bom):
            try:
                return data[len(bom):].decode(codec)
            except UnicodeDecodeError as e:
                raise error(f"not valid {codec.upper()} text (byte {e.start + len(bom)})", file=name) from None
    if b"\x00" in data[:8192]:
        raise error("binary data: expected YAML or JSON text", file=name)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise error(f"not UTF-8 text (byte {e.start} is {data[e.start:e.start + 1]!r}): expected YAML or "
                    f"JSON in UTF-8", file=name, line=line) from None


def read_text(path: str, max_bytes: int = DEFAULT_MAX_BYTES, *, error: type[InputError] = InputError,
              what: str = "", stdin_hint: str = "", raise_hint: str = RAISE_HINT) -> str:
    """``read_bytes`` then ``decode_text``."""
    name = "<stdin>" if path == "-" else path
    data = read_bytes(path, max_bytes, error=error, what=what, stdin_hint=stdin_hint, raise_hint=raise_hint)
    return decode_text(data, name, error=error)


# ================================================================================================ YAML

# PyYAML is imported only when a text needs it (``strict_loader``): JSON inputs and the block YAML that
# ``blockyaml`` reads never do, and its import (a large regular expression compiled) costs ~20 ms.


class DuplicateKey(Exception):
    """A key repeated in one mapping (raised by the constructor; turned into an ``InputError``)."""

    def __init__(self, key: object, first: int, second: int) -> None:
        super().__init__(key, first, second)
        self.key = key
        self.first = first
        self.second = second

    def message(self, line_offset: int = 0) -> str:
        return (f"mapping key {_go_quote(self.key)} already defined at line {self.first + line_offset}: a key may appear once "
                f"in a mapping (kubectl refuses the file)")


def _go_quote(key: object) -> str:
    text = key if isinstance(key, str) else str(key)
    return '"' + escape(text if len(text) <= MAX_ECHO else text[:MAX_ECHO] + "...").replace('"', '\\"') + '"'


_MERGE = "tag:yaml.org,2002:merge"


class BadScalar(ValueError):
    """A plain scalar that YAML's resolver types as a number (``0x_``, 5,000 digits) but that cannot be
    read as one; it knows where it stands, so the error names the value's line, not its document's."""

    def __init__(self, node: Any, what: str, detail: str) -> None:
        super().__init__(detail)
        self.line = node.start_mark.line + 1
        self.column = node.start_mark.column + 1
        self.value = node.value
        self.what = what
        self.detail = "it has too many digits" if "digits" in detail else detail

    def message(self) -> str:
        return (f"invalid YAML: cannot read {echo(self.value, 60)} (column {self.column}) as {self.what} "
                f"({self.detail}); quote it if it is a string")


def _reading(construct: Any, what: str) -> Any:
    def read(loader: Any, node: Any) -> Any:
        try:
            return construct(loader, node)
        except (ValueError, OverflowError) as e:
            raise BadScalar(node, what, str(e)) from None
    return read


_strict: Any = None  # StrictLoader, built by the first strict_loader()


def strict_loader() -> Any:
    """``StrictLoader``: PyYAML's safe loader (the C one when libyaml is there) with two Kubernetes
    habits: timestamps stay the strings they are (an unquoted ``2025-13-45`` must not fail in the
    constructor) and a repeated key is an error. The duplicate check costs one length comparison per
    mapping unless a key really repeats. Built (and PyYAML imported) on first use."""
    global _strict
    if _strict is None:
        _strict = _build_strict_loader()
    return _strict


def _build_strict_loader() -> Any:
    import yaml

    base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C parser is many times faster

    class StrictLoader(base):
        __doc__ = strict_loader.__doc__

        def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
            own = len(node.value)
            mapping = super().construct_mapping(node, deep=deep)
            if len(mapping) != len(node.value):
                merged = len(node.value) != own
                # flatten_mapping put merged pairs first; only the mapping's own keys may not repeat
                pairs = node.value[len(node.value) - own:] if merged else node.value
                seen: dict[Any, int] = {}
                for key_node, _ in pairs:
                    if key_node.tag == _MERGE:
                        continue
                    key = self.construct_object(key_node, deep=True)
                    try:
                        first = seen.get(key)
                    except TypeError:
                        continue
                    line = key_node.start_mark.line + 1
                    if first is not None:
                        raise DuplicateKey(key, first, line)
                    seen[key] = line
            return mapping

    StrictLoader.add_constructor("tag:yaml.org,2002:timestamp", base.construct_yaml_str)
    StrictLoader.add_constructor("tag:yaml.org,2002:int", _reading(base.construct_yaml_int, "an integer"))
    StrictLoader.add_constructor("tag:yaml.org,2002:float", _reading(base.construct_yaml_float, "a number"))
    return StrictLoader


def __getattr__(name: str) -> Any:  # ``reader.StrictLoader`` as before, built on first use
    if name == "StrictLoader":
        return strict_loader()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def yaml_error(e: Exception, source: str, *, error: type[InputError] = InputError) -> InputError:
    mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
    line = mark.line + 1 if mark is not None else None
    problem = getattr(e, "problem", None) or str(e).splitlines()[0]
    context = getattr(e, "context", None)
    if "maximum nesting depth" in problem:  # libyaml >= 0.2.6 (PyYAML 6.0.4's wheels) stops at 1,000 levels
        return error(TOO_DEEP, file=source, line=line)
    column = f" (column {mark.column + 1})" if mark is not None else ""
    return error(f"invalid YAML: {context + ', ' if context else ''}{problem}{column}", file=source, line=line)


def yaml_documents(text: str, source: str, *, error: type[InputError] = InputError,
                   line_offset: int = 0, doc_offset: int = 0) -> Iterator[tuple[int, Any, int]]:
    """(1-based index, object, line of the document) for each document of a YAML stream; empty
    documents are yielded as ``None``. Bounded as the module says. ``text`` may be a part of a file that
    begins ``line_offset`` lines and ``doc_offset`` documents into it: lines and document numbers, in
    what is yielded and in errors, are then the file's."""
    try:
        check_yaml_events(text, source, error=error, line_offset=line_offset, doc_offset=doc_offset)
        loader = strict_loader()(text)
        try:
            index = doc_offset
            while loader.check_node():
                node = loader.get_node()
                index += 1
                if node is None:
                    continue
                line = node.start_mark.line + 1 + line_offset
                try:
                    obj = loader.construct_document(node)
                except DuplicateKey as e:
                    raise error(e.message(line_offset), file=source, doc=index, line=e.second + line_offset) from None
                except BadScalar as e:
                    raise error(e.message(), file=source, doc=index, line=e.line + line_offset) from None
                except (ValueError, TypeError, OverflowError) as e:  # e.g. an integer of 5000 digits
                    detail = "an integer with too many digits" if "digits" in str(e) else str(e)
                    raise error(f"invalid YAML: cannot read a value: {echo(detail, 200)[1:-1]}", file=source,
                                doc=index, line=line) from None
                except RecursionError:
                    raise error("invalid YAML: nested too deeply", file=source, doc=index, line=line) from None
                yield index, obj, line
        finally:
            loader.dispose()
    except _yaml_error_class() as e:
        err = yaml_error(e, source, error=error)
        if err.line is not None:
            err = error(err.detail, file=source, line=err.line + line_offset)
        raise err from None


_SEPARATOR_TAIL = re.compile(r"---[ \t]*$", re.M)


def document_separators(text: str) -> list[tuple[int, int]]:
    """(start, end) of every bare ``---`` line (document separators with nothing after them): the
    matches ``_SEPARATOR_TAIL.finditer`` would give, tried only where ``str.find`` finds the literal
    (several times faster than the regular expression engine's own scan of an 18 MB dump; a ``^---``
    pattern would be tried at every line)."""
    out = []
    find, match = text.find, _SEPARATOR_TAIL.match
    pos = find("---")
    while pos >= 0:
        m = match(text, pos)
        if m is None:
            pos = find("---", pos + 1)
            continue
        if pos == 0 or text[pos - 1] == "\n":
            out.append((pos, m.end()))
        pos = find("---", m.end())
    return out


_BLANK = re.compile(r"(?:[ ]*(?:#[^\n]*)?\n)*")


def _first_content_line(chunk: str) -> int | None:
    """Lines before the first that is neither blank nor a comment; None when there is none."""
    end = _BLANK.match(chunk).end()  # type: ignore[union-attr]
    rest = chunk[end:].lstrip(" ")
    if not rest or rest.startswith("#"):
        return None
    return chunk.count("\n", 0, end)


def block_documents(text: str) -> list[tuple[str, int, int | None]] | None:
    """The documents of a YAML stream as PyYAML numbers them, for the fast block readers: (the
    document's text, the line its text begins on, lines before its first content or None when it has
    none). Content before the first separator is a document only if it holds any; every separator
    starts one. None when a separator line holds content (the readers then decline the text)."""
    separators = document_separators(text)
    if text.count("\n---") + text.startswith("---") != len(separators):
        return None
    starts = [0] + [end + 1 for _, end in separators]
    ends = [start for start, _ in separators] + [len(text)]
    out: list[tuple[str, int, int | None]] = []
    line = 1
    counted = 0
    for i, (begin, end) in enumerate(zip(starts, ends, strict=True)):
        chunk = text[begin:end] if begin <= end else ""
        line += text.count("\n", counted, min(begin, len(text)))
        counted = max(min(begin, len(text)), counted)
        first = _first_content_line(chunk)
        if i == 0 and first is None:
            continue
        out.append((chunk, line, first))
    return out


def load_yaml_one(text: str, source: str, *, error: type[InputError] = InputError) -> Any:
    """The documents of a stream that should hold one object: a list of the non-empty ones."""
    return [obj for _, obj, _ in yaml_documents(text, source, error=error) if obj is not None]


def _yaml_error_class() -> type[Exception]:
    import yaml

    return yaml.YAMLError


_DOC = 2


def check_yaml_events(text: str, source: str, *, error: type[InputError] = InputError, line_offset: int = 0,
                      doc_offset: int = 0) -> None:
    """Refuse alias bombs and absurd nesting before anything is composed.

    One pass over the parser's events (libyaml's parser keeps its own stack; only the composer
    recurses): a document nested deeper than ``MAX_DEPTH``, aliases that would add more than
    ``MAX_ALIAS_NODES`` nodes when expanded (billion laughs), or an alias to a node that encloses it (a
    recursive structure) is an error. Time and memory are linear in the text."""
    import yaml

    loader = strict_loader()

    def fail(message: str, index: int, ev: Any) -> InputError:
        return error(message, file=source, doc=index + doc_offset, line=ev.start_mark.line + 1 + line_offset)

    if "&" not in text:  # no anchor, hence no alias: only the nesting needs watching (the common case)
        depth = 0
        index = 0
        delta = {yaml.SequenceStartEvent: 1, yaml.MappingStartEvent: 1, yaml.SequenceEndEvent: -1,
                 yaml.MappingEndEvent: -1, yaml.DocumentStartEvent: _DOC}.get
        for ev in yaml.parse(text, Loader=loader):
            d = delta(type(ev))
            if d:
                if d == _DOC:
                    index += 1
                    continue
                depth += d
                if depth > MAX_DEPTH:
                    raise fail(TOO_DEEP, index, ev)
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
    events: Iterator[Any] = yaml.parse(text, Loader=loader)
    for ev in events:
        cls = type(ev)
        if cls is scalar:
            if ev.anchor is not None:
                sizes[ev.anchor] = 1
            if counts:
                counts[-1] = min(counts[-1] + 1, cap)
        elif cls is alias:
            anchor = ev.anchor
            if anchor in open_anchors:
                raise fail(f"alias *{escape(anchor[:MAX_ECHO])} refers to a node that contains it: recursive "
                           f"structures are not Kubernetes objects", index, ev)
            n = sizes.get(anchor, 1)  # an undefined alias: the composer reports it
            alias_nodes += n
            if alias_nodes > MAX_ALIAS_NODES:
                raise fail(f"aliases expand to more than {MAX_ALIAS_NODES} nodes (a YAML alias bomb?): refused",
                           index, ev)
            if counts:
                counts[-1] = min(counts[-1] + n, cap)
        elif cls in starts:
            depth += 1
            if depth > MAX_DEPTH:
                raise fail(TOO_DEEP, index, ev)
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


# ================================================================================================ JSON

class JsonDuplicate(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _strict_object(pairs: list[tuple[str, Any]]) -> dict:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for k, _ in pairs:
            if k in seen:
                raise JsonDuplicate(k)
            seen.add(k)
    return obj


_STRICT_JSON = json.JSONDecoder(object_pairs_hook=_strict_object)
_PLAIN_JSON = json.JSONDecoder()
_dumps: Any = None  # orjson.dumps, imported by the first JSON read


def _no_repeated_key(text: str, start: int, end: int, value: object) -> bool:
    """Whether no object of ``value``, read by the plain decoder from ``text[start:end]``, repeated a key
    (the plain decoder keeps the last value of a repeated key silently; the strict one's hook costs a
    Python call per object, a third of the decoding).

    Written again (orjson), ``value`` holds a colon per key kept plus the colons of its strings. The text
    holds one per key read plus its strings' colons, literal or escaped as ``\\u003a``: a repeated key
    drops at least one colon from the first count, nothing adds any, so equal counts mean no key repeated.
    (Counting ``\\u003a`` also where it follows an escaped backslash only makes the counts differ.) False
    also when orjson cannot write the value (integers over 64 bits, lone surrogates, deep nesting)."""
    global _dumps
    if _dumps is None:
        import orjson

        _dumps = orjson.dumps
    try:
        written = _dumps(value)
    except (TypeError, ValueError):
        return False
    colons = text.count(":", start, end)
    if text.find("\\u003", start, end) >= 0:
        colons += text.count("\\u003a", start, end) + text.count("\\u003A", start, end)
    return colons == written.count(b":")


#: a text from this size up is first read by orjson (``_whole_value``); a smaller one (a configuration, one
#: document of a YAML stream) by the standard decoder alone, whose cost is then small
ORJSON_FROM = 64 << 10
#: an integer of this many digits or more may lie outside 64 bits, where orjson reads a float without a word
_LONG_DIGITS = 19


def _whole_value(text: str) -> list[Any] | None:
    """``[value]`` of a text holding one JSON value (with JSON's whitespace around it), read by orjson, or
    None: the caller then reads the text as before, with the standard decoder.

    orjson reads such a text twice as fast and to the same value, save where it refuses what the standard
    decoder reads (NaN, Infinity, numbers beyond a double, lone surrogates, deep nesting, two values: None,
    read again) and where it reads an integer beyond 64 bits as a float: a text with a run of
    ``_LONG_DIGITS`` digits anywhere (a string's too) is left to the standard decoder. A key repeated in an
    object is found as ``_no_repeated_key`` finds it, with the text's colons counted by NumPy (a quarter of
    ``str.count``'s instructions; NumPy is imported anyway by every command that simulates)."""
    if len(text) < ORJSON_FROM:
        return None
    global _dumps
    import numpy as np
    import orjson

    _dumps = orjson.dumps
    try:
        value = orjson.loads(text)
        written = orjson.dumps(value)
    except (TypeError, ValueError, RecursionError):  # (orjson.JSONDecodeError is a ValueError)
        return None
    data = text.encode()  # (no lone surrogate: orjson read the text)
    colons = 0
    for start in range(0, len(data), _SCAN_BLOCK):
        digits, found = _scan_block(np, data, start)
        if digits:
            return None
        colons += found
    if data.find(b"\\") >= 0 and data.find(b"\\u003") >= 0:
        colons += data.count(b"\\u003a") + data.count(b"\\u003A")
    if colons != _colons(np, written):
        return None
    return [value]


def _colons(np: Any, data: bytes) -> int:
    """``data.count(b":")``, counted by NumPy a block at a time (a fifth of ``bytes.count``'s instructions;
    the blocks' arrays stay small, and the bytes are not copied)."""
    found = 0
    for start in range(0, len(data), _SCAN_BLOCK):
        block = np.frombuffer(data, np.uint8, min(_SCAN_BLOCK, len(data) - start), start)
        found += int(np.count_nonzero(block == 58))  # ':'
    return found


#: bytes of the text scanned at once by ``_scan_block`` (a multiple of 8): its arrays stay this small
_SCAN_BLOCK = 1 << 20
_SCAN_OVERLAP = 24  # (a multiple of 8, at least _LONG_DIGITS - 1: a run that starts in a block ends in its scan)
_EIGHT_DIGITS = 0x0101010101010101  # eight bytes of True


def _scan_block(np: Any, data: bytes, start: int) -> tuple[bool, int]:
    """(whether a run of ``_LONG_DIGITS`` digits starts in ``data[start:start + _SCAN_BLOCK]``, the colons
    there), read from that block and the ``_SCAN_OVERLAP`` bytes after it."""
    end = min(start + _SCAN_BLOCK + _SCAN_OVERLAP, len(data))
    piece = data[start:end]
    if len(piece) % 8:
        piece += bytes(8 - len(piece) % 8)  # (the last block: zeros, neither digits nor colons)
    chars = np.frombuffer(piece, np.uint8)
    colons = int(np.count_nonzero(chars[:_SCAN_BLOCK] == 58))  # ':'
    is_digit = (chars - np.uint8(48)) < 10
    # a run of _LONG_DIGITS (>= 15) digits holds a whole aligned block of 8: such blocks are looked for
    # first (one C pass), the runs themselves only where one is found
    if not bool((is_digit.view(np.uint64) == np.uint64(_EIGHT_DIGITS)).any()):
        return False, colons
    at = np.flatnonzero(is_digit)  # positions of 0-9, rising
    run = _LONG_DIGITS - 1
    starts = at[:-run][at[run:] - at[:-run] == run]  # (run steps of 1: _LONG_DIGITS digits in a row)
    return bool((starts < _SCAN_BLOCK).any()), colons


def _strict_raw_decode(text: str, pos: int) -> tuple[Any, int]:
    """``_STRICT_JSON.raw_decode(text, pos)``: the same value, or the same exception. The plain decoder
    reads first and ``_no_repeated_key`` checks its value; anything else (an error included, which the
    strict decoder may meet in another order: a repeated key before a later syntax error) is read again
    by the strict decoder."""
    try:
        value, end = _PLAIN_JSON.raw_decode(text, pos)
    except (ValueError, RecursionError):
        return _STRICT_JSON.raw_decode(text, pos)
    if _no_repeated_key(text, pos, end, value):
        return value, end
    return _STRICT_JSON.raw_decode(text, pos)


def strict_json_loads(text: str) -> Any:
    """``json.loads`` that raises :class:`JsonDuplicate` for a key repeated in one object."""
    whole = _whole_value(text)
    if whole is not None:
        return whole[0]
    try:
        value = _PLAIN_JSON.decode(text)
    except (ValueError, RecursionError):
        return _STRICT_JSON.decode(text)
    if _no_repeated_key(text, 0, len(text), value):  # (whitespace around the value holds no colon)
        return value
    return _STRICT_JSON.decode(text)


def json_duplicate_line(text: str, start: int, key: str) -> tuple[int, int]:
    """Lines (first, second) of the key that repeats in the JSON value starting at ``start`` (best effort:
    the first two occurrences of the quoted key after ``start``)."""
    quoted = json.dumps(key)
    first = text.find(quoted, start)
    second = text.find(quoted, first + 1) if first >= 0 else -1
    line = text.count("\n", 0, first) + 1 if first >= 0 else 0
    return line, (text.count("\n", 0, second) + 1 if second >= 0 else line)


def json_values(text: str, source: str, *, error: type[InputError] = InputError,
                line_offset: int = 0, exact: list[bool] | None = None) -> Iterator[tuple[int, Any, int]]:
    """(1-based index, value, line) of each JSON value of a text holding one or several concatenated
    values; duplicate keys, nesting and oversized integers are errors with their line. ``exact``: a list
    to which is appended, before the first value, whether orjson read the text (one value, of JSON's own
    types only: dicts, lists, strings, integers within 64 bits, floats, booleans and None, which
    ``orjson.dumps`` never writes alike for unequal values; else the standard decoder read it, whose NaN
    orjson writes as null)."""
    pos, end = 0, len(text)
    ws = re.compile(r"\s*")
    pos = ws.match(text, pos).end()  # type: ignore[union-attr]
    line, counted, index = 1 + line_offset, 0, 0
    whole = _whole_value(text) if pos < end else None
    if exact is not None:
        exact.append(whole is not None)
    if whole is not None:  # one value (nearly every file): read by orjson
        yield 1, whole[0], line + text.count("\n", 0, pos)
        return
    while pos < end:
        line += text.count("\n", counted, pos)
        counted = pos
        index += 1
        start = pos
        try:
            obj, pos = _strict_raw_decode(text, pos)
        except json.JSONDecodeError as e:
            raise error(f"invalid JSON: {e.msg} (line {e.lineno + line_offset}, column {e.colno})", file=source,
                        line=e.lineno + line_offset) from None
        except JsonDuplicate as e:
            first, second = json_duplicate_line(text, start, e.key)
            raise error(f"mapping key {_go_quote(e.key)} already defined at line {first + line_offset}: a key may "
                        f"appear once in an object (kubectl refuses the file)", file=source, doc=index,
                        line=second + line_offset) from None
        except RecursionError:
            raise error("invalid JSON: nested too deeply", file=source, doc=index, line=line) from None
        except ValueError as e:  # an integer with more digits than Python converts
            detail = "an integer with too many digits" if "digits" in str(e) else str(e)
            raise error(f"invalid JSON: {detail}", file=source, doc=index, line=line) from None
        yield index, obj, line
        pos = ws.match(text, pos).end()  # type: ignore[union-attr]


def json_loads(text: str, source: str, *, error: type[InputError] = InputError) -> Any:
    """One JSON value with the checks of :func:`json_values` (a JSON document inside a YAML stream)."""
    values = list(json_values(text, source, error=error))
    if len(values) != 1:
        raise error(f"invalid JSON: expected one value, found {len(values)}", file=source)
    return values[0][1]
