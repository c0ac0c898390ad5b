"""Imports point down the layers only; only report/cli touch rich/typer/tabulate, only the live source
touches kubernetes."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "pysched"
LAYERS = ["model", "snapshot", "controllers", "framework", "plugins", "scheduler", "report", "cli"]
UI_LIBS = {"rich", "typer", "tabulate"}


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append(node.module)
    return out


def _layer_of(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "pysched" or len(parts) < 2 or parts[1] not in LAYERS:
        return None
    return LAYERS.index(parts[1])


FILES = sorted(p for layer in LAYERS for p in (ROOT / layer).rglob("*.py"))


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROOT)) for p in FILES])
def test_imports_point_down(path: Path) -> None:
    own = LAYERS.index(path.relative_to(ROOT).parts[0])
    for mod in _imports(path):
        layer = _layer_of(mod)
        assert layer is None or layer <= own, f"{path.relative_to(ROOT)} imports {mod} from a higher layer"
        top = mod.split(".")[0]
        if top in UI_LIBS:
            assert LAYERS[own] in ("report", "cli"), f"{path.relative_to(ROOT)} imports {top}"
        if top == "kubernetes":
            assert path.name == "live.py", f"{path.relative_to(ROOT)} imports kubernetes"


BASE = sorted(p for p in ROOT.glob("*.py") if p.name != "__init__.py")  # errors.py, apimachinery.py


@pytest.mark.parametrize("path", BASE, ids=[p.name for p in BASE])
def test_base_modules_import_no_layer(path: Path) -> None:
    """Modules beside the layers are below all of them: every layer may import them."""
    for mod in _imports(path):
        assert _layer_of(mod) is None, f"{path.name} imports {mod}"
        assert mod.split(".")[0] not in UI_LIBS | {"kubernetes"}, f"{path.name} imports {mod}"
