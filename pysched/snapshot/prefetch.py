"""Read and parse big snapshot files on a second thread while the command line imports the rest.

A run spends its first tenths of a second importing numpy, the scheduler and the plugins, all on one
core. A block-YAML snapshot can be read in that time on the other: the file's bytes, gzip's inflation
and ``yaml_rs``'s own parse (it lets go of the interpreter lock while it scans) need no interpreter.
``start`` is called by the CLI with the command's arguments before those imports; the loader then asks
``text_of`` for a file's text and ``block_yaml_of`` for its parsed documents.

Nothing here decides anything: the thread runs the loader's reader (``reader.read_text``) with the
default limit, and for block YAML the fast reader whose parse runs without the lock
(``fastyaml.read_block_yaml``; the loader's own first choice, ``blockyaml``, is plain Python and would
only take turns with the imports; both read a text exactly as PyYAML does, or decline it). Its results
are used only when the loader would have read exactly that (same path, limit and file identity: device,
inode, size, modification time, before and after the read) and for that very text. Whatever the
thread could not do (an error, a limit, a file that changed, a text declined) is done again by the
loader, which then reports it as always; warnings and errors never come from the thread.
"""

from __future__ import annotations

import gc
import os
import stat
import threading
from collections.abc import Iterable
from types import ModuleType

#: files smaller than this are read by the loader itself: a thread would not pay for itself
MIN_BYTES = 256 << 10
#: files named so are taken for JSON: only read on the thread, no YAML reader imported for them
JSON_SUFFIXES = (".json", ".json.gz")

_FileKey = tuple[int, int, int, int]

_lock = threading.Lock()
_thread: threading.Thread | None = None
_collector_paused = False  # by ``start``, until ``finish``
_texts: dict[str, tuple[_FileKey, int, str]] = {}  # path -> (identity, max_bytes, text)
_parsed: dict[int, tuple[str, list[tuple[object, int]]]] = {}  # id(text) -> (text, documents)


def _identity(path: str) -> _FileKey | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def candidates(args: Iterable[str]) -> list[tuple[str, _FileKey]]:
    """The arguments that are regular files big enough to be worth a thread, with their identity."""
    out = []
    for arg in dict.fromkeys(args):  # a file named twice is read once
        if not arg or arg.startswith("-"):
            continue
        key = _identity(arg)
        if key is not None and key[2] >= MIN_BYTES:
            out.append((arg, key))
    return out


def start(args: Iterable[str]) -> bool:
    """Start reading the big files among ``args`` on a daemon thread; True when one was started."""
    global _thread
    files = candidates(args)
    if not files or _thread is not None:
        return False
    from pysched.snapshot import reader  # (its YAML parts are imported on first use)

    fastyaml: ModuleType | None = None
    if not all(path.endswith(JSON_SUFFIXES) for path, _ in files):
        # imported by this thread, never by the second: yaml_rs's allocator, when first set up on a thread
        # that then ends, crashes the next parse on another thread (a segmentation fault)
        from pysched.snapshot import fastyaml
    _thread = threading.Thread(target=_work, args=(files, reader, fastyaml), name="pysched-prefetch",
                               daemon=True)
    # the parse builds hundreds of thousands of containers that all live on: the cyclic collector would
    # walk them again and again (the loader pauses it for the same reason, ``loader.collector_paused``)
    global _collector_paused
    if gc.isenabled():
        gc.disable()
        _collector_paused = True
    _thread.start()
    return True


def _work(files: list[tuple[str, _FileKey]], reader: ModuleType, fastyaml: ModuleType | None) -> None:
    limit: int = reader.DEFAULT_MAX_BYTES
    for path, key in files:
        try:
            text = reader.read_text(path, limit)
        except Exception:  # the loader reads it again and reports
            continue
        if _identity(path) != key:
            continue  # changed while it was read
        with _lock:
            _texts[path] = (key, limit, text)
        if fastyaml is not None and _block_yaml_likely(text):
            try:
                # yaml_rs's reader, not blockyaml's: its parse runs without the interpreter lock
                docs = fastyaml.read_block_yaml(text)
            except Exception:
                continue
            if docs is not None:
                with _lock:
                    _parsed[id(text)] = (text, docs)


def _block_yaml_likely(text: str) -> bool:
    """What the loader will hand to ``read_block_yaml``: not JSON, nor a stream with JSON documents
    (a wrong guess only costs the thread's time: the loader uses a parse only for the text it asks)."""
    return not text.lstrip().startswith(("{", "[")) and "\n{" not in text


def _wait() -> None:
    thread = _thread
    if thread is not None and thread is not threading.current_thread():
        thread.join()


def finish() -> None:
    """Wait for the thread and give the collector back as ``start`` found it (the loader calls this
    before it pauses the collector itself)."""
    global _collector_paused
    _wait()
    if _collector_paused:
        _collector_paused = False
        gc.enable()


def text_of(path: str, max_bytes: int) -> str | None:
    """The text the thread read of ``path`` under the same limit, when the file is still that file;
    handed over once."""
    if _thread is None:
        return None
    finish()
    with _lock:
        entry = _texts.pop(path, None)
    if entry is None:
        return None
    key, limit, text = entry
    if limit != max_bytes or _identity(path) != key:
        return None
    return text


def block_yaml_of(text: str) -> list[tuple[object, int]] | None:
    """The documents ``read_block_yaml`` found in this very text on the thread (None when it did not
    read it, or declined it); handed over once."""
    if not _parsed:
        return None
    with _lock:
        entry = _parsed.pop(id(text), None)
    if entry is None or entry[0] is not text:
        return None
    return entry[1]


def reset() -> None:
    """Forget the thread and what it read (tests; a second run in one process starts afresh)."""
    global _thread
    finish()
    with _lock:
        _texts.clear()
        _parsed.clear()
    _thread = None
