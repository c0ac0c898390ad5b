"""The CLI's second thread: big snapshot files read and parsed while the rest is imported, used only
when the loader would have read exactly that, and never the source of a warning or an error."""

from __future__ import annotations

import gc
import gzip
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from pysched.cli.main import app
from pysched.errors import PyschedError
from pysched.snapshot import loader, prefetch
from pysched.snapshot.loader import load_snapshot
from tests.builders import topology_cluster

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    prefetch.reset()
    yield
    prefetch.reset()


@pytest.fixture(scope="module")
def cluster_doc() -> dict:
    return topology_cluster(seed=5, n_nodes=300, n_running=600, n_pending=120)


def _write_block_yaml(path: Path, doc: dict) -> Path:
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    assert path.stat().st_size >= prefetch.MIN_BYTES
    return path


def _summary(cluster: object) -> list[tuple]:
    pods = [(p.namespace, p.name, p.node_name, p.priority) for p in cluster.pods]  # type: ignore[attr-defined]
    nodes = [n.name for n in cluster.nodes]  # type: ignore[attr-defined]
    return [tuple(nodes), *pods]


def _no_parse_here(text: str, **kwargs: object) -> None:
    raise AssertionError("the loader parsed a text the thread had parsed")


def test_the_loader_takes_the_threads_text_and_documents(tmp_path: Path, cluster_doc: dict,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    path = _write_block_yaml(tmp_path / "big.yaml", cluster_doc)
    expected = _summary(load_snapshot([str(path)]))
    assert prefetch.start(["--config", "x", str(path)])
    monkeypatch.setattr(loader, "read_block_text", _no_parse_here)
    assert _summary(load_snapshot([str(path)])) == expected
    assert prefetch.text_of(str(path), loader.DEFAULT_MAX_BYTES) is None  # handed over once


@pytest.mark.parametrize("change", ["rewritten", "other-limit"])
def test_what_the_thread_read_is_not_used_for_another_file_or_limit(tmp_path: Path, cluster_doc: dict,
                                                                    change: str) -> None:
    path = _write_block_yaml(tmp_path / "big.yaml", cluster_doc)
    assert prefetch.start([str(path)])
    prefetch._wait()
    if change == "other-limit":
        assert prefetch.text_of(str(path), loader.DEFAULT_MAX_BYTES // 2) is None
        return
    smaller = dict(cluster_doc, items=cluster_doc["items"][:-5])
    _write_block_yaml(path, smaller)
    os.utime(path, ns=(0, 1))  # another modification time, whatever the clock's resolution
    assert prefetch.text_of(str(path), loader.DEFAULT_MAX_BYTES) is None
    assert len(load_snapshot([str(path)]).pods) == sum(i["kind"] == "Pod" for i in smaller["items"])


def test_a_file_named_twice_is_read_once_and_loaded_twice(tmp_path: Path, cluster_doc: dict) -> None:
    path = _write_block_yaml(tmp_path / "big.yaml", cluster_doc)
    assert [p for p, _ in prefetch.candidates([str(path), str(path)])] == [str(path)]
    once = load_snapshot([str(path)])
    assert prefetch.start([str(path), str(path)])
    with pytest.raises(PyschedError, match="Node"):  # the same objects twice: the loader's own duplicate error
        load_snapshot([str(path), str(path)])
    assert len(once.nodes) == 300


def test_only_big_regular_files_start_a_thread(tmp_path: Path) -> None:
    small = tmp_path / "small.yaml"
    small.write_text("kind: List\nitems: []\n")
    assert prefetch.candidates(["-", "--output", str(tmp_path), str(small), str(tmp_path / "absent.yaml")]) == []
    assert not prefetch.start([str(small)])
    assert prefetch.text_of(str(small), loader.DEFAULT_MAX_BYTES) is None


@pytest.mark.parametrize("form", ["json", "json.gz", "yaml.gz"])
def test_json_and_gzip_read_alike_through_the_thread(tmp_path: Path, cluster_doc: dict, form: str) -> None:
    raw = (json.dumps(cluster_doc, indent=1) if form.startswith("json") else yaml.safe_dump(cluster_doc)).encode()
    path = tmp_path / f"big.{form}"
    path.write_bytes(gzip.compress(raw) if form.endswith(".gz") else raw)
    if path.stat().st_size < prefetch.MIN_BYTES:
        path.write_bytes(gzip.compress(raw, compresslevel=0))
    expected = _summary(load_snapshot([str(path)]))
    assert prefetch.start([str(path)])
    assert _summary(load_snapshot([str(path)])) == expected


def test_errors_are_the_loaders_own(tmp_path: Path, cluster_doc: dict) -> None:
    path = _write_block_yaml(tmp_path / "big.yaml", cluster_doc)
    path.write_text(path.read_text() + "- kind: Pod\n  metadata: {name: [}\n")
    with pytest.raises(PyschedError) as plain:
        load_snapshot([str(path)])
    assert prefetch.start([str(path)])
    with pytest.raises(PyschedError) as threaded:
        load_snapshot([str(path)])
    assert str(threaded.value) == str(plain.value)
    assert str(path) in str(plain.value)


def test_the_command_line_prints_the_same_bytes_with_the_thread(tmp_path: Path, cluster_doc: dict) -> None:
    path = _write_block_yaml(tmp_path / "big.yaml", cluster_doc)
    inline = CliRunner().invoke(app, ["simulate", str(path), "-o", "json"])  # no main(): no thread
    assert inline.exit_code == 0, inline.output
    code = ("import sys, threading; from pysched.cli import main as m; from pysched.snapshot import prefetch\n"
            "sys.argv = ['pysched', 'simulate', sys.argv[1], '-o', 'json']\n"
            "started = prefetch.start\n"
            "def start(args):\n"
            "    assert started(args); return True\n"
            "prefetch.start = start\n"
            "m.main()\n")
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=120,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout == inline.stdout


@pytest.mark.parametrize("enabled", [True, False], ids=["collector-on", "collector-off"])
def test_the_collector_rests_while_the_thread_parses_and_comes_back_as_it_was(tmp_path: Path, cluster_doc: dict,
                                                                              enabled: bool) -> None:
    path = _write_block_yaml(tmp_path / "big.yaml", cluster_doc)
    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        assert prefetch.start([str(path)])
        assert not gc.isenabled()
        load_snapshot([str(path)])
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()


def test_a_json_file_read_on_the_thread_imports_no_yaml_reader(tmp_path: Path, cluster_doc: dict) -> None:
    path = tmp_path / "big.json"
    path.write_text(json.dumps(cluster_doc, indent=1))
    code = ("import sys; from pysched.snapshot import prefetch\n"
            "assert prefetch.start([sys.argv[1]]); prefetch.finish()\n"
            "print(sorted(m for m in ('yaml', 'yaml_rs', 'pysched.snapshot.fastyaml') if m in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=120,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_yaml_rs_is_set_up_by_the_main_thread_and_survives_the_threads_end(tmp_path: Path,
                                                                           cluster_doc: dict) -> None:
    # yaml_rs first imported on a thread that then ends makes the next parse on another thread crash:
    # a fresh process runs two prefetches (two threads), then parses on the main thread
    first = _write_block_yaml(tmp_path / "a.yaml", cluster_doc)
    second = _write_block_yaml(tmp_path / "b.yaml", dict(cluster_doc, items=cluster_doc["items"][:-1]))
    code = ("import sys; from pysched.snapshot import prefetch, loader\n"
            "for path in sys.argv[1:]:\n"
            "    prefetch.reset(); assert prefetch.start([path])\n"
            "    print(len(loader.load_snapshot([path]).pods))\n"
            "import yaml_rs; yaml_rs.loads('a: 1')\n")
    done = subprocess.run([sys.executable, "-X", "faulthandler", "-c", code, str(first), str(second)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    pods = sum(i["kind"] == "Pod" for i in cluster_doc["items"])
    assert done.stdout.split() == [str(pods), str(pods - 1)]
