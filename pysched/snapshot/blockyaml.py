"""A reader for the block YAML that ``kubectl get -o yaml`` and PyYAML's block dumper write, in plain
Python, used only where it reads the text exactly as PyYAML's safe loader does.

Such a dump is a small language: one ``key: value``, ``key:`` or ``- ...`` per line, nesting by
indentation, single-line scalars. Most of its lines repeat (a 2,000-pod dump has 100,000 lines and
9,000 distinct ones), so each distinct line is judged once and the per-line work is only the
structure. That needs neither PyYAML (whose import alone is ~20 ms) nor yaml_rs (whose scanner costs
~250 instructions per byte); anything this reader does not know returns None and the caller goes on
to those (``fastyaml``, then PyYAML, which also produces every error message).

A line is accepted when it is blank, a whole-line comment, or, after its indentation (below
``MAX_PREFIX`` columns, so nesting stays far below the loader's ``MAX_DEPTH``) and at most one
sequence dash, ``key: value`` or ``key:`` (a plain or quoted key that PyYAML reads as a string) or,
after a dash, a lone value. A value is ``{}``, ``[]``, a single-line quoted scalar (double-quoted with
the escapes ``\\\\ \\" \\n \\t \\r \\uXXXX`` only), or a plain scalar that PyYAML types as a string,
a decimal integer, a boolean or a null. Refused: tags, anchors, aliases, flow collections, block
scalars (``|``, ``>``), multi-line scalars, comments after content, other numbers (``1.5``, ``0755``,
``0x1F``, ``1:30``; PyYAML reads them, and this reader does not try), characters PyYAML refuses or
reads as line breaks, directives and ``...``, repeated keys (PyYAML's path names both lines).
"""

from __future__ import annotations

import re
from typing import Any

from pysched.snapshot.reader import block_documents

MAX_PREFIX = 40  # columns of indentation (+ dash): nesting stays far below reader.MAX_DEPTH
MAX_KEY = 1000  # PyYAML refuses implicit keys over 1,024 characters

# first characters of a plain scalar that make it something else (or an error) in block context;
# ``?`` and ``:`` are refused too (allowed before a non-space, but rare), ``-`` only before a space
_INDICATOR = frozenset("-?:,[]{}#&*!|>'\"%@`")
# PyYAML's implicit types by first character (yaml.resolver): booleans and nulls among the letters
_KEYWORDS: dict[str, object] = {
    **dict.fromkeys(("yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"), True),
    **dict.fromkeys(("no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"), False),
    **dict.fromkeys(("null", "Null", "NULL"), None),
}
_KEYWORD_FIRST = frozenset("yYnNtTfFoO")
_NUMBER_FIRST = frozenset("-+.0123456789")
_DECIMAL = re.compile(r"[-+]?(?:0|[1-9][0-9]{0,17})")
# a superset of what PyYAML's int and float resolvers match (binary, octal, hexadecimal, sexagesimal,
# underscores, exponents after a dot, .inf, .nan): such a word is not judged here
_MAYBE_NUMBER = re.compile(r"[-+]?(?:0[bx][0-9a-fA-F_]*|[0-9_:]*(?:\.[0-9_]*(?:[eE][-+][0-9]+)?)?"
                           r"|\.(?:inf|Inf|INF|nan|NaN|NAN))")
_ESCAPES = {'\\"': '"', "\\\\": "\\", "\\n": "\n", "\\t": "\t", "\\r": "\r"}
_ESCAPE = re.compile(r'(\\u[0-9a-fA-F]{4}|\\["\\ntr])')


class _Refuse(Exception):
    """Something this reader does not read: the caller uses another reader."""


# what a key line holds after the key
_SCALAR, _PENDING, _MAP, _SEQ = 0, 1, 2, 3
Line = tuple[int, bool, int, Any, int, object]  # indent, dash, key column, key (None: a lone value), kind, value
_SKIP: Line = (-1, False, 0, None, _SCALAR, None)  # a blank or comment line


def _plain(word: str) -> object:
    """PyYAML's value of a plain scalar (no indicator first, no ``: `` or `` #`` inside)."""
    c = word[0]
    if c in _KEYWORD_FIRST:
        return _KEYWORDS.get(word, word)
    if c in _NUMBER_FIRST:
        if _DECIMAL.fullmatch(word):
            return int(word)
        if _MAYBE_NUMBER.fullmatch(word):
            raise _Refuse
        return word  # (a timestamp too: the project's loaders keep timestamps as their text)
    if c == "~":
        return None if word == "~" else word
    if word in ("<<", "="):  # a merge key or a value tag: not read here
        raise _Refuse
    return word


def _quoted(s: str) -> str:
    """The value of a whole single-line quoted scalar ``s``."""
    inner = s[1:-1]
    if len(s) < 2 or s[-1] != s[0]:
        raise _Refuse
    if s[0] == "'":
        if "'" in inner.replace("''", ""):
            raise _Refuse
        return inner.replace("''", "'")
    if "\\" not in inner:
        if '"' in inner:
            raise _Refuse
        return inner
    parts = _ESCAPE.split(inner)
    for i in range(0, len(parts), 2):
        if "\\" in parts[i] or '"' in parts[i]:
            raise _Refuse
    for i in range(1, len(parts), 2):
        e = parts[i]
        if e[1] == "u":
            code = int(e[2:], 16)
            if 0xD800 <= code <= 0xDFFF:
                raise _Refuse
            parts[i] = chr(code)
        else:
            parts[i] = _ESCAPES[e]
    return "".join(parts)


def _value(s: str) -> tuple[int, object]:
    """(kind, value) of what follows ``key: `` or ``- `` (``s`` stripped, not empty)."""
    c = s[0]
    if " #" in s:
        raise _Refuse  # (a comment after the value)
    if c == "'" or c == '"':
        return _SCALAR, _quoted(s)
    if s == "{}":
        return _MAP, None
    if s == "[]":
        return _SEQ, None
    if (c in _INDICATOR and (c != "-" or len(s) == 1 or s[1] == " ")) or ": " in s or s[-1] == ":":
        raise _Refuse
    return _SCALAR, _plain(s)


_keys: dict[str, str] = {}  # plain key -> its string (judged once per process)


def _key(s: str) -> str:
    if not s:
        raise _Refuse  # (an empty key: PyYAML reads null)
    if s[0] == "'" or s[0] == '"':
        return _quoted(s)
    if s[0] in _INDICATOR or s[-1] == " " or len(s) > MAX_KEY:
        raise _Refuse
    key = _plain(s)
    if type(key) is not str:
        raise _Refuse  # (keys that are numbers, booleans, nulls: rare; PyYAML reads them)
    return key


_heads: dict[str, tuple[int, bool, int, str] | None] = {}  # "  key: " -> (indent, dash, col, key) (or None)
_values: dict[str, tuple[int, object]] = {}  # what follows "key: " -> (kind, value)


def _classify(line: str) -> Line:
    """What one line holds (``_SKIP`` for blank and comment lines); raises ``_Refuse``.

    Most distinct lines are a known ``  key: `` and a value seen before in other lines (names, node
    names, timestamps): both parts are judged once each."""
    i = line.find(": ")
    if i > 0:
        head = line[:i + 2]
        if head in _heads:
            info = _heads[head]
        else:
            info = _heads[head] = _head(head)
        if info is not None:
            indent, dash, col, key = info
            tail = line[i + 2:].strip(" ")
            if not tail:
                return indent, dash, col, key, _PENDING, None
            v = _values.get(tail)
            if v is None:
                v = _values[tail] = _value(tail)
            return indent, dash, col, key, v[0], v[1]
    return _classify_line(line)


def _head(head: str) -> tuple[int, bool, int, str] | None:
    """``head`` (up to the first ``: ``) as ``_classify_line`` reads it before a plain value; None when
    the whole line must be read (quotes, a comment sign, anything refused)."""
    if "'" in head or '"' in head or "#" in head:
        return None
    try:
        indent, dash, col, key, _, _ = _classify_line(head + "x")
    except _Refuse:
        return None
    return None if key is None else (indent, dash, col, key)


def _classify_line(line: str) -> Line:
    s = line.rstrip(" ")
    if not s:
        return _SKIP
    body = s.lstrip(" ")
    indent = len(s) - len(body)
    if body[0] == "#":
        return _SKIP
    if indent >= MAX_PREFIX or " #" in body:
        raise _Refuse
    dash = body[0] == "-" and (len(body) == 1 or body[1] == " ")
    col = indent
    if dash:
        rest = body[2:].lstrip(" ")
        if not rest:
            raise _Refuse  # a dash alone: the item is on the next lines
        col = indent + len(body) - len(rest)
        if col >= MAX_PREFIX:
            raise _Refuse
        body = rest
    if body[0] == "'" or body[0] == '"':  # a quoted key, or (after a dash) a quoted value
        end = _quote_end(body)
        if end > len(body):
            raise _Refuse  # (a quoted scalar over several lines)
        if end == len(body):
            if not dash:
                raise _Refuse
            return indent, dash, col, None, _SCALAR, _quoted(body)
        if body[end] != ":" or (end + 1 < len(body) and body[end + 1] != " "):
            raise _Refuse
        key = _quoted(body[:end])
        rest = body[end + 1:].lstrip(" ")
    else:
        i = body.find(": ")
        if i >= 0:
            key, rest = body[:i], body[i + 2:].lstrip(" ")
        elif body[-1] == ":":
            key, rest = body[:-1], ""
        elif dash:
            kind, value = _value(body)
            return indent, dash, col, None, kind, value
        else:
            raise _Refuse  # a lone scalar outside a sequence (a continuation line, or the whole document)
        k = _keys.get(key)
        key = _keys[key] = _key(key) if k is None else k
    if not rest:
        return indent, dash, col, key, _PENDING, None
    kind, value = _value(rest)
    return indent, dash, col, key, kind, value


def _quote_end(s: str) -> int:
    """The index after the quoted scalar that begins ``s`` (``len(s) + 1`` when it does not close)."""
    q = s[0]
    i = 1
    n = len(s)
    while i < n:
        c = s[i]
        if c == q:
            if q == "'" and i + 1 < n and s[i + 1] == "'":
                i += 2
                continue
            return i + 1
        i += 2 if c == "\\" and q == '"' else 1
    return n + 1


def _parse(lines: list[str], cache: dict[str, Line]) -> object:
    """The object of one document's lines (None when it holds none); raises ``_Refuse``.

    The open collections are a stack; ``cur`` is the innermost, ``ci`` its indentation, ``cseq`` whether
    it is a sequence. Most lines continue ``cur`` or open a collection in it, and take a few steps."""
    stack: list[tuple[int, Any, bool]] = []  # the collections enclosing cur: (indent, container, is a sequence)
    root: Any = None
    cur: Any = None
    ci = -2  # (no line has it; blank and comment lines have -1)
    cseq = False
    pend: Any = None  # a key of cur (a mapping) whose value is on the next lines
    get = cache.get
    for line in lines:
        c = get(line)
        if c is None:
            c = cache[line] = _classify(line)
        indent, dash, col, key, kind, value = c
        if pend is not None:
            if indent < 0:
                continue
            if indent > ci or (dash and indent == ci):
                new: Any = [] if dash else {}
                cur[pend] = new
                stack.append((ci, cur, cseq))
                cur, ci, cseq = new, indent, dash
            else:
                cur[pend] = None
            pend = None
        if indent != ci or dash is not cseq:
            if indent < 0:
                continue
            if cur is None:
                root = cur = [] if dash else {}
                ci, cseq = indent, dash
            else:
                while ci > indent:
                    if not stack:
                        raise _Refuse  # content left of the document's first line
                    ci, cur, cseq = stack.pop()
                if cseq and not dash and ci == indent:  # the end of a sequence written at its key's indentation
                    if not stack:
                        raise _Refuse
                    ci, cur, cseq = stack.pop()
                if ci != indent or cseq is not dash:
                    raise _Refuse
        if dash:
            if key is None:
                cur.append(value if kind == _SCALAR else {} if kind == _MAP else [])
                continue
            mapping: dict = {}
            cur.append(mapping)
            stack.append((ci, cur, cseq))
            cur, ci, cseq = mapping, col, False
        if key in cur:
            raise _Refuse  # a repeated key: PyYAML's path reports it
        if kind == _SCALAR:
            cur[key] = value
        elif kind == _PENDING:
            pend = key
        else:
            cur[key] = {} if kind == _MAP else []
    if pend is not None:
        cur[pend] = None
    return root


def read_block_yaml(text: str) -> list[tuple[object, int]] | None:
    """The documents of ``text`` as (object, first line), or None when another reader must read it.

    Documents are numbered as PyYAML numbers them: content before the first separator is a document only
    if it holds any; every separator starts one (an empty one reads as None)."""
    if text.startswith(("...", "%")):
        return None
    chunks = block_documents(text)
    if chunks is None:
        return None
    cache: dict[str, Line] = {}
    docs: list[tuple[object, int]] = []
    try:
        for chunk, line, first in chunks:
            docs.append((None, line) if first is None else (_parse(chunk.split("\n"), cache), line + first))
    except _Refuse:
        return None
    if not all(map(str.isprintable, cache)):
        return None  # (a superset of what PyYAML refuses or reads as a line break: controls, tab, CR, ...)
    if len(_keys) > 10_000 or len(_heads) > 10_000 or len(_values) > 100_000:
        _keys.clear()
        _heads.clear()
        _values.clear()
    return docs


def read_block_text(text: str) -> list[tuple[object, int]] | None:
    """The documents of a block YAML ``text`` as (object, first line), read by the cheapest reader that
    reads it as PyYAML does: this module's, else ``fastyaml``'s (yaml_rs, and with it PyYAML, imported
    only then); None when only PyYAML's path can (the caller's)."""
    docs = read_block_yaml(text)
    if docs is None:
        from pysched.snapshot import fastyaml

        docs = fastyaml.read_block_yaml(text)
    return docs
