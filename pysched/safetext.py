"""Text a user gave, made safe to print: control and bidirectional-formatting characters escaped (a
name must not be able to rewrite the terminal or reorder a report), long values cut to a bounded length.

Below every layer (like ``errors``): the model, the loaders and every renderer use it.
"""

from __future__ import annotations

import re
from functools import cache

MAX_ECHO = 80  # characters of a user's value repeated in a message
MAX_LINE = 2000  # characters of one message line printed (head and tail kept)

# C0/C1 controls, DEL, and the bidirectional formatting characters that can reorder what a terminal shows
_UNSAFE_CHARS = "\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff"


@cache
def _unsafe(keep_newlines: bool = False) -> re.Pattern[str]:
    """The unsafe characters (newlines too unless ``keep_newlines``; tabs always), compiled at the first text
    checked: a run that prints no warning and no error compiles neither (some 5 M instructions at start)."""
    return re.compile(f"[{_UNSAFE_CHARS}{'' if keep_newlines else chr(10)}\t]")


def _escape_one(m: re.Match[str]) -> str:
    ch = m.group(0)
    if ch == "\n":
        return "\\n"
    if ch == "\t":
        return "\\t"
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape(text: str) -> str:
    """Control and bidirectional-formatting characters (newlines too) as visible escapes (``\\x1b``)."""
    unsafe = _unsafe()
    if not unsafe.search(text):
        return text
    return unsafe.sub(_escape_one, text)


def escape_lines(text: str) -> str:
    """:func:`escape`, keeping the newlines that separate the lines of a message, each line clipped."""
    unsafe = _unsafe(keep_newlines=True)
    if len(text) <= MAX_LINE and not unsafe.search(text):
        return text
    return "\n".join(clip(unsafe.sub(_escape_one, line)) for line in text.split("\n"))


def clip(text: str, limit: int = MAX_LINE) -> str:
    """``text`` cut in the middle to about ``limit`` characters (the start names the culprit, the end
    usually says what was expected)."""
    if len(text) <= limit:
        return text
    head, tail = limit * 2 // 3, limit // 4
    return f"{text[:head]}... [{len(text) - head - tail} characters cut] ...{text[-tail:]}"


def echo(value: object, limit: int = MAX_ECHO) -> str:
    """A user's value for a message: quoted, escaped, cut to ``limit`` characters with its length said."""
    text = value if isinstance(value, str) else repr(value)
    out = escape(text if len(text) <= limit else text[:limit])
    if len(text) > limit:
        return f"'{out}'... ({len(text)} characters)"
    return f"'{out}'"
