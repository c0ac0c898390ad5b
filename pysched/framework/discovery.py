"""Out-of-tree plugins: where they are found and how they join the registry.

A plugin module exposes ``NAME`` (the plugin's name in a KubeSchedulerConfiguration), ``PLUGIN`` (the class,
built on the extension-point ABCs of ``pysched.framework.interface``), ``factory(args, handle)`` and
optionally ``decode_args(raw)`` (the raw ``pluginConfig`` args or ``None`` → typed args; raises ConfigError).

Plugins are found, in this order:

1. every module of the ``plugins/`` folder of the pysched checkout (next to the ``pysched`` package, or in
   the current directory when that is the checkout; skipped when pysched is installed without it);
2. every module of each ``--plugin-dir DIR``;
3. every entry point of the group ``pysched.plugins`` of the installed packages (each loads a module).

A module is a ``*.py`` file or a folder with ``__init__.py``; names starting with ``_`` or ``test_``
(helpers and tests) and the folder ``tests`` are skipped. Two plugins of one name are an error naming
both sources, as is a module that cannot be imported or does not look like a plugin module.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import inspect
import os
import sys
import zlib
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

from pysched.errors import ConfigError, InputError
from pysched.framework.interface import Plugin, extension_points_of
from pysched.framework.registry import Registry

ENTRY_POINT_GROUP = "pysched.plugins"
REPO_PLUGINS = "plugins"
_SKIPPED_DIRS = {"tests", "__pycache__"}


# ==================================================================================================
# Where


def _is_checkout(root: Path) -> bool:
    return (root / "pysched" / "__init__.py").is_file() and (root / "pyproject.toml").is_file()


def repo_plugins_dir() -> Path | None:
    """The ``plugins/`` folder of the pysched checkout, or ``None`` when there is no checkout."""
    candidates = [Path(__file__).resolve().parents[2], Path.cwd()]
    for root in candidates:
        folder = root / REPO_PLUGINS
        if _is_checkout(root) and folder.is_dir():
            return folder
    return None


def plugin_modules(folder: Path) -> list[Path]:
    """The plugin modules of a folder, by name: ``*.py`` files and packages (their ``__init__.py``)."""
    out = []
    for entry in sorted(folder.iterdir(), key=lambda p: p.name):
        name = entry.name
        if name.startswith(("_", ".", "test_")) or name == "conftest.py":
            continue
        if entry.is_file() and name.endswith(".py"):
            out.append(entry)
        elif entry.is_dir() and name not in _SKIPPED_DIRS and (entry / "__init__.py").is_file():
            out.append(entry / "__init__.py")
    return out


def _display(path: Path, base: Path | None, shown_base: str) -> str:
    """How a source is named in messages: ``plugins/foo.py``, or the folder as the user wrote it."""
    shown = path.parent if path.name == "__init__.py" else path
    if base is not None:
        try:
            rel = shown.relative_to(base)
        except ValueError:
            return str(shown)
        return os.path.join(shown_base, str(rel)) if shown_base else str(rel)
    return str(shown)


# ==================================================================================================
# Loading


def _module_name(path: Path) -> str:
    # a name unique per file: two 32-bit checksums of its path (hashlib would start OpenSSL at every run of a
    # checkout, whose plugins/ folder is loaded each time)
    where = str(path.resolve()).encode()
    digest = f"{zlib.crc32(where):08x}{zlib.adler32(where):08x}"
    stem = path.parent.name if path.name == "__init__.py" else path.stem
    safe = "".join(c if c.isalnum() or c == "_" else "_" for c in stem)
    return f"pysched_plugin_{digest}_{safe}"


def load_module_file(path: Path, source: str) -> ModuleType:
    """Import one ``.py`` file (or package ``__init__.py``) under a unique module name."""
    name = _module_name(path)
    search = [str(path.parent)] if path.name == "__init__.py" else None
    spec = importlib.util.spec_from_file_location(name, path, submodule_search_locations=search)
    if spec is None or spec.loader is None:
        raise ConfigError("cannot load plugin: not an importable Python module", file=source)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look the module up by name
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        sys.modules.pop(name, None)
        raise ConfigError(f"cannot load plugin: {_describe(exc)}", file=source) from exc
    return module


def _describe(exc: BaseException) -> str:
    if isinstance(exc, SyntaxError):
        return f"SyntaxError: {exc.msg} (line {exc.lineno})"
    return f"{type(exc).__name__}: {exc}"


def check_plugin_module(module: Any, source: str) -> None:
    """A plugin module must expose NAME, PLUGIN (a Plugin class with that NAME) and a callable factory."""
    missing = [attr for attr in ("NAME", "PLUGIN", "factory") if not hasattr(module, attr)]
    if missing:
        raise ConfigError(f"not a plugin module: it lacks {', '.join(missing)} (a plugin module exposes NAME, "
                          f"PLUGIN, factory(args, handle) and optionally decode_args(raw))", file=source)
    name, cls = module.NAME, module.PLUGIN
    if not isinstance(name, str) or not name:
        raise ConfigError(f"NAME must be a non-empty string, got {name!r}", file=source)
    if not inspect.isclass(cls) or not issubclass(cls, Plugin):
        raise ConfigError(f"PLUGIN must be a class built on pysched.framework.interface (got {cls!r})",
                          file=source)
    if cls.NAME != name:
        raise ConfigError(f"PLUGIN.NAME is {cls.NAME!r} but the module's NAME is {name!r}: they must agree",
                          file=source)
    if inspect.isabstract(cls):
        raise ConfigError(f"{cls.__name__} does not implement {', '.join(sorted(cls.__abstractmethods__))}",
                          file=source)
    if not extension_points_of(cls):
        raise ConfigError(f"{cls.__name__} implements no extension point", file=source)
    if not callable(module.factory):
        raise ConfigError("factory must be callable as factory(args, handle)", file=source)
    decoder = getattr(module, "decode_args", None)
    if decoder is not None and not callable(decoder):
        raise ConfigError("decode_args must be callable as decode_args(raw)", file=source)


def _register(registry: Registry, module: Any, source: str) -> None:
    check_plugin_module(module, source)
    registry.register_module(module, source=source)


def load_folder(registry: Registry, folder: Path, shown: str) -> None:
    """Register every plugin module of ``folder``; ``shown`` names the folder in sources."""
    for path in plugin_modules(folder):
        source = _display(path, folder, shown)
        _register(registry, load_module_file(path, source), source)


def _entry_points() -> Iterable[Any]:
    if not _may_declare_entry_points():
        return ()
    import importlib.metadata

    return importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)


def _may_declare_entry_points() -> bool:
    """Whether an installed package may declare a ``pysched.plugins`` entry point: a look into the
    ``entry_points.txt`` of the path's distributions. Importing importlib.metadata and parsing every
    package's file cost 15-25 ms at each start with 150 packages installed; it happens only when a file
    names the group, or when the path holds something this look cannot read (a zip, a finder of its own)."""
    for finder in sys.meta_path:
        if hasattr(finder, "find_distributions") and finder is not importlib.machinery.PathFinder:
            return True
    needle = ENTRY_POINT_GROUP.encode()
    for entry in sys.path:
        folder = entry or "."
        try:
            with os.scandir(folder) as listing:
                infos = [e.path for e in listing if e.name.endswith((".dist-info", ".egg-info"))]
        except NotADirectoryError:
            return True  # a zip archive on the path
        except OSError:
            continue  # a path entry that does not exist
        for info in infos:
            path = os.path.join(info, "entry_points.txt")
            if not os.access(path, os.F_OK):  # most have none: asked without an exception raised each
                continue
            try:
                with open(path, "rb") as f:
                    if needle in f.read():
                        return True
            except OSError:
                continue
    return False


def entry_point_source(ep: Any) -> str:
    dist = getattr(ep, "dist", None)
    package = getattr(dist, "name", None) if dist is not None else None
    where = f" (package {package})" if package else ""
    return f"entry point {ENTRY_POINT_GROUP}:{ep.name}{where}"


def load_entry_points(registry: Registry) -> None:
    seen: set[tuple[str, str]] = set()
    for ep in sorted(_entry_points(), key=lambda e: (e.name, e.value)):
        if (ep.name, ep.value) in seen:  # one distribution found twice on sys.path
            continue
        seen.add((ep.name, ep.value))
        source = entry_point_source(ep)
        try:
            module = ep.load()
        except Exception as exc:
            raise ConfigError(f"cannot load plugin {ep.value}: {_describe(exc)}", file=source) from exc
        _register(registry, module, source)


# ==================================================================================================
# The registry


def build_registry(plugin_dirs: Iterable[str] = (), include_repo_plugins: bool = True,
                   include_entry_points: bool = True, base: Registry | None = None) -> Registry:
    """``base`` (the in-tree registry; the framework layer cannot import the plugins) plus every
    out-of-tree plugin found; ``base`` is extended in place and returned."""
    registry = base if base is not None else Registry()
    done: set[Path] = set()
    if include_repo_plugins:
        folder = repo_plugins_dir()
        if folder is not None:
            done.add(folder.resolve())
            load_folder(registry, folder, REPO_PLUGINS)
    for raw in plugin_dirs:
        folder = Path(raw).expanduser()
        if not folder.is_dir():
            raise InputError(f"{raw}: no such directory", field="--plugin-dir")
        if folder.resolve() in done:
            continue
        done.add(folder.resolve())
        load_folder(registry, folder, raw)
    if include_entry_points:
        load_entry_points(registry)
    return registry
