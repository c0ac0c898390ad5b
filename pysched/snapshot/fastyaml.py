"""A fast reader for large block-style YAML (``kubectl get -o yaml``), used only where it provably reads
the text as PyYAML's safe loader does.

PyYAML's C loader needs about 13 s of CPU for the 18 MB dump of a 5,000-node cluster; ``yaml_rs`` (a
Rust parser that builds the Python objects natively) needs about 0.7 s. The two disagree where YAML 1.1
and 1.2 disagree (``yes``, ``0755``, ``1:30``, ``1e5``, ...) and ``yaml_rs`` is laxer (unknown tags) and
overflows its stack on absurd nesting. So this path is taken only when a linear scan of the text shows
nothing that could be read differently or dangerously:

- no tags, anchors, aliases, directives, complex keys, tabs or carriage returns, nor characters PyYAML
  refuses or reads as line breaks (controls, ``\x85``, ``\u2028``); no flow collections other than the
  empty ``[]`` and ``{}`` (kubectl and PyYAML's block dumper write no others);
- no line begins with ``MAX_PREFIX`` or more columns of indentation and sequence dashes: nesting stays
  far below the loader's ``MAX_DEPTH`` (every block level moves the content right, or is a sequence
  whose dashes do);
- documents separated by bare ``---`` lines only, so each document's first line is known;
- every plain word that either library could read as something other than a string (numbers,
  booleans, nulls, ``=``, ``<<``) reads to the same value in both (checked once per distinct word).

Anything else returns None and the caller uses PyYAML, which also produces every error message; an
error of ``yaml_rs`` (e.g. a duplicate key, which PyYAML accepts) does the same.
"""

from __future__ import annotations

import bisect
import importlib
import math
import re
from typing import Any

import yaml

from pysched.snapshot.reader import block_documents

yaml_rs: Any
try:
    yaml_rs = importlib.import_module("yaml_rs")
except ImportError:  # pragma: no cover - optional speed-up
    yaml_rs = None

MIN_CHARS = 1 << 16  # below this PyYAML is fast enough, and small inputs keep the one well-known reader
MAX_PREFIX = 40

_DEEP = re.compile(rf"\n[ -]{{{MAX_PREFIX}}}")
# First characters of words that may not be strings: numbers (also ``_1``, ``.5``, ``+.inf``), nulls,
# ``=``, ``<<``; booleans and nulls are ``_KEYWORDS``.
_FIRST = "-+0-9_.~=<"  # (a character class)
_FIRST_CHARS = frozenset("-+0123456789_.~=<")
# Characters PyYAML refuses (C0 and C1 controls, ``\ufffe``, ``\uffff``) or reads as line breaks
# (``\x85``, ``\u2028``, ``\u2029``): yaml_rs would keep them in the value. Tab and CR are refused too.
_CONTROL = (*(chr(c) for c in range(0x20) if c != 0x0A), "\x7f")
_WIDE_BAD = (*(chr(c) for c in range(0x80, 0xA0)), "\u2028", "\u2029", "\ufffe", "\uffff")
# Certainly a string in both: two dots (IP addresses, versions), a sign inside that is no exponent's
# (dates, UUIDs), a letter no number is written with (quantities such as 100m, 1Gi).
_STRING = re.compile(r"[^:]*\.[^:]*\.|.+?(?<![eE])[-+]|.*[ghj-mp-wyzGHJ-MP-WYZ]")
_KEYWORDS = re.compile(r"(?i:yes|no|on|off|y|n|true|false|null):?")
_KEYWORD_FIRST = frozenset("yYnNoOtTfF")
_Word = tuple[bool, object, object]  # (read alike, yaml_rs's value, PyYAML's value)
_words: dict[str, _Word] = {}  # cache across files (cleared when large)


_Base: Any = yaml.CSafeLoader  # the stubs type the C loader apart from its constructor


class _Loader(_Base):  # the project's reading of timestamps: they stay strings
    pass


_Loader.add_constructor("tag:yaml.org,2002:timestamp", _Base.construct_yaml_str)


def available() -> bool:
    return yaml_rs is not None


def read_block_yaml(text: str, *, force: bool = False) -> list[tuple[object, int]] | None:
    """The documents of ``text`` as (object, first line), or None when PyYAML must read it.

    Documents are numbered as PyYAML numbers them: content before the first separator is a document only
    if it holds any; every separator starts one (an empty one reads as None)."""
    if yaml_rs is None or (len(text) < MIN_CHARS and not force):
        return None
    if text.startswith(("...", "%", "[", "{")):
        return None  # (a flow collection, even an empty one, as the whole document)
    # every check below reads the distinct lines only, each after a newline: a dump repeats most of its
    # lines (an 18 MB one has 62,000 distinct lines, 2.2 MB), and every check is about what one line holds
    lines = "\n" + "\n".join(set(text.split("\n")))
    if _unsafe(lines):
        return None
    words = set(lines.split() if text.isascii() else lines.replace("\n", " ").split(" "))
    if _unsafe_words(words):
        return None
    fixes = _fixes(words)
    if fixes is None:
        return None
    chunks = block_documents(text)
    if chunks is None:
        return None
    docs: list[tuple[object, int]] = []
    for chunk, line, first in chunks:
        try:
            obj = yaml_rs.loads(chunk, parse_datetime=False)
        except Exception:
            return None
        docs.append((_fix_document(obj, chunk, fixes) if fixes else obj, line + (first or 0)))
    return docs


def _unsafe(lines: str) -> bool:
    """What the distinct lines (each after a newline) show outside their words (``_unsafe_words``
    judges those): characters PyYAML refuses or folds, document ends, directives, deep nesting. The words
    are split at spaces and newlines: this refuses every other whitespace of ASCII texts; in others
    ``str.split()`` would also split at no-break and other Unicode spaces, which YAML does not."""
    if any(c in lines for c in _CONTROL) or (not lines.isascii() and any(c in lines for c in _WIDE_BAD)):
        return True  # PyYAML refuses (or folds) these; yaml_rs would take them as they are
    return "\n..." in lines or "\n%" in lines or _DEEP.search(lines) is not None


_INDICATORS = frozenset("!&*@`%")  # tags, anchors, aliases, reserved indicators at the start of a word


def _unsafe_words(words: set[str]) -> bool:
    """A word that begins with a tag, anchor, alias or reserved indicator; a complex key's ``?``; a flow
    collection other than the empty ``[]`` and ``{}`` (kubectl and PyYAML's block dumper write no
    others). Judged on the distinct words, instead of searching the text once per pattern."""
    firsts = {w[:1] for w in words}
    if not firsts.isdisjoint(_INDICATORS) or "?" in words:
        return True
    if "[" in firsts or "{" in firsts:
        return any(w.startswith(("[", "{")) and not w.startswith(("[]", "{}")) for w in words)
    return False


def _candidates(words: set[str]) -> set[str]:
    """The words that may not be strings: those that begin as a number, ``=``, ``<<`` or ``~`` may, or
    that are a boolean or null keyword (with a colon: a key; at most six characters)."""
    first, keyword, kw_first = _FIRST_CHARS, _KEYWORDS.fullmatch, _KEYWORD_FIRST
    return {w for w in words if w and (w[0] in first or (w[0] in kw_first and len(w) <= 6 and keyword(w)))}


_NOT_COLON = "[^:\\n]"  # (within a line)
# the candidates that ``_STRING`` finds strings (``_judge`` would say so), in one search of the candidates
# joined by newlines: those that begin as a number (never a keyword, which ``_judge`` tests first); a key's
# trailing colon changes nothing, none of the alternatives can use it
_STRING_LINES = re.compile(rf"^(?=[{_FIRST}])(?={_STRING.pattern.replace('[^:]', _NOT_COLON)}).+", re.M)


def _strings(candidates: set[str]) -> set[str]:
    """The candidates ``_judge`` would certainly find read alike as strings (a dump's uids, names, ...)."""
    return set(_STRING_LINES.findall("\n".join(candidates)))


def _fixes(words: set[str]) -> dict[tuple[type, object], str] | None:
    """yaml_rs's value -> PyYAML's string, for plain words PyYAML reads as strings and yaml_rs as
    numbers (``747242e187``, a pod-template-hash); None when some word cannot be repaired that way."""
    if len(_words) > 100_000:
        _words.clear()
    fixes: dict[tuple[type, object], str] = {}
    kept: set[tuple[type, object]] = set()
    candidates = _candidates(words)
    for word in candidates - _strings(candidates):  # (the strings need no fix, nor keep any number)
        hit = _words.get(word)
        if hit is None:
            hit = _words[word] = _judge(word)
        alike, ours, theirs = hit
        if alike:
            if isinstance(ours, (int, float)):  # bool is an int
                kept.add((type(ours), ours))
            continue
        if word.endswith(":") or not isinstance(theirs, str) or isinstance(ours, str) or ours != ours:
            return None  # (a key, a value PyYAML reads as no string, NaN)
        if fixes.setdefault((type(ours), ours), theirs) != theirs:
            return None  # two words read as one number by yaml_rs: no telling which is where
    if kept & fixes.keys():
        return None  # the same value is also written in a form both read alike: no telling them apart
    return fixes


def _judge(word: str) -> _Word:
    if word.endswith(":") and len(word) > 1:  # a key
        word = word[:-1]
    if not _KEYWORDS.fullmatch(word) and _STRING.match(word):
        return True, word, word
    try:
        theirs = yaml.load(word, Loader=_Loader)
    except (yaml.YAMLError, ValueError, TypeError, OverflowError):  # the constructor's, e.g. ``0x_``
        return False, None, None
    try:
        ours = yaml_rs.loads(word, parse_datetime=False)
    except Exception:
        return False, None, None
    if type(ours) is not type(theirs):
        return False, ours, theirs
    same = ours == theirs or (isinstance(ours, float) and math.isnan(ours) and math.isnan(theirs))
    return same, ours, theirs


def _fix_document(obj: object, chunk: str, fixes: dict[tuple[type, object], str]) -> object:
    """``_fix`` where it is needed: not at all in a document whose text holds none of the words, and in
    a ``kind: List`` only in the items whose text holds one (a walk of a whole 5,000-node List is
    0.2 s; the words are usually a few pod-template-hashes)."""
    words = set(fixes.values())
    hits = [i for w in words for i in _occurrences(chunk, w)]
    if not hits:
        return obj
    items = obj.get("items") if type(obj) is dict else None
    if type(items) is list and len(items) > 1:
        starts = [0] * chunk.startswith("- ") + _item_starts(chunk)
        # every item begins with "- " at column 0; if as many such lines as items are found, they are
        # exactly the items' first lines (else walk everything)
        if len(starts) == len(items) and min(hits) >= starts[0]:
            for index in sorted({bisect.bisect_right(starts, i) - 1 for i in hits}):
                items[index] = _fix(items[index], fixes)
            return obj
    return _fix(obj, fixes)


def _item_starts(chunk: str) -> list[int]:
    """Where the lines that begin with ``- `` begin, after a newline (the entries of a top-level sequence:
    the items of a ``kind: List``), found with ``str.find``: several times faster than the regular
    expression engine's scan of a large text."""
    out = []
    find = chunk.find
    i = find("\n- ")
    while i >= 0:
        out.append(i + 1)
        i = find("\n- ", i + 3)
    return out


def _occurrences(text: str, word: str) -> list[int]:
    out = []
    i = text.find(word)
    while i >= 0:
        out.append(i)
        i = text.find(word, i + len(word))
    return out


def _fix(obj: object, fixes: dict[tuple[type, object], str]) -> object:
    """``obj`` with every value that is a key of ``fixes`` replaced by its string (keys never need it:
    ``_fixes`` refuses words written as keys)."""
    kinds = {t for t, _ in fixes}
    if type(obj) in kinds:
        return fixes.get((type(obj), obj), obj)
    stack = [obj]
    while stack:
        v = stack.pop()
        pairs: Any = v.items() if isinstance(v, dict) else enumerate(v)  # type: ignore[arg-type]
        changed = []
        for k, x in pairs:
            t = type(x)
            if t is dict or t is list:
                stack.append(x)
            elif t in kinds and (t, x) in fixes:
                changed.append((k, fixes[(t, x)]))
        for k, x in changed:
            v[k] = x  # type: ignore[index]
    return obj
