"""Out-of-tree plugins: discovery from folders and entry points, clashes, failures, config, faults, CLI."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from pysched.errors import ConfigError, InputError, PyschedError
from pysched.framework import discovery
from pysched.framework.config import build_config
from pysched.framework.discovery import ENTRY_POINT_GROUP, build_registry, repo_plugins_dir
from pysched.framework.registry import DuplicatePluginError, Registry
from pysched.plugins import in_tree_registry
from pysched.scheduler.simulation import Simulation, SimulationOptions
from pysched.snapshot.loader import Document, build_cluster
from tests.builders import python_lines

REPO = Path(__file__).resolve().parent.parent

FILTER_PLUGIN = '''
from pysched.errors import ConfigError
from pysched.framework.interface import FilterPlugin
from pysched.framework.status import Status

NAME = "{name}"


def decode_args(raw):
    if raw is None:
        return {{"zone": "a"}}
    if set(raw) - {{"zone"}}:
        raise ConfigError("unknown field", field=sorted(set(raw) - {{"zone"}})[0])
    return dict(raw)


class P(FilterPlugin):
    NAME = NAME

    def __init__(self, args):
        self.args = args

    def filter(self, state, pod, node):
        if node.node.labels.get("zone") != self.args["zone"]:
            return Status.unresolvable("wrong zone")
        return None


PLUGIN = P


def factory(args, handle):
    return P(args)
'''

RAISING_PLUGIN = '''
from pysched.framework.interface import FilterPlugin

NAME = "Raiser"


class Raiser(FilterPlugin):
    NAME = NAME

    def filter(self, state, pod, node):
        if node.name == "n2":
            raise ValueError("boom")
        return None


PLUGIN = Raiser


def factory(args, handle):
    return Raiser()
'''


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(textwrap.dedent(text))
    return path


def registry_with(*dirs: Path, entry_points: bool = False) -> Registry:
    return build_registry([str(d) for d in dirs], include_repo_plugins=False, include_entry_points=entry_points,
                          base=in_tree_registry())


def nodes_and_pod() -> list[dict]:
    objs: list[dict] = []
    for name, zone in (("n1", "a"), ("n2", "b"), ("n3", "b")):
        alloc = {"cpu": "4", "memory": "8Gi", "pods": "10"}
        objs.append({"apiVersion": "v1", "kind": "Node",
                     "metadata": {"name": name, "labels": {"zone": zone, "kubernetes.io/hostname": name}},
                     "status": {"allocatable": alloc}})
    objs.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                 "spec": {"containers": [{"name": "c", "image": "i"}]}})
    objs.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "q", "namespace": "default"},
                 "spec": {"containers": [{"name": "c", "image": "i"}]}})
    return objs


def simulate(registry: Registry, cfg_raw: dict, **opts: Any) -> Any:
    cfg = build_config(cfg_raw, registry)
    objs = nodes_and_pod()
    cluster = build_cluster([(Document("t", i + 1, o), o, "") for i, o in enumerate(objs)])
    return Simulation(cluster, cfg, registry, SimulationOptions(trace=True, **opts)).run()


def enabling(name: str, args: dict | None = None, point: str = "filter") -> dict:
    prof: dict = {"schedulerName": "default-scheduler", "plugins": {point: {"enabled": [{"name": name}]}}}
    if args is not None:
        prof["pluginConfig"] = [{"name": name, "args": args}]
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [prof]}


# ==================================================================================================
# Folders


def test_plugin_dir_is_loaded_and_configurable(tmp_path: Path) -> None:
    write(tmp_path / "mine", "zonefilter.py", FILTER_PLUGIN.format(name="ZoneFilter"))
    registry = registry_with(tmp_path / "mine")
    spec = registry.get("ZoneFilter")
    assert spec is not None
    assert spec.source == str(tmp_path / "mine" / "zonefilter.py")
    assert spec.extension_points == ["filter"]
    result = simulate(registry, enabling("ZoneFilter", {"zone": "b"}))
    assert result.bindings["default/p"] in ("n2", "n3")
    result = simulate(registry, enabling("ZoneFilter"))  # default args: zone a
    assert result.bindings == {"default/p": "n1", "default/q": "n1"}


def test_plugin_args_errors_name_the_field(tmp_path: Path) -> None:
    write(tmp_path, "zonefilter.py", FILTER_PLUGIN.format(name="ZoneFilter"))
    registry = registry_with(tmp_path)
    with pytest.raises(ConfigError) as info:
        build_config(enabling("ZoneFilter", {"zoen": "b"}), registry)
    assert info.value.field == "profiles[0].pluginConfig[0].args.zoen"


def test_helpers_tests_and_packages(tmp_path: Path) -> None:
    write(tmp_path, "_helper.py", "raise RuntimeError('helpers are not imported')\n")
    write(tmp_path, "test_zone.py", "raise RuntimeError('tests are not imported')\n")
    write(tmp_path / "tests", "whatever.py", "raise RuntimeError('tests are not imported')\n")
    write(tmp_path / "pkgplugin", "__init__.py", FILTER_PLUGIN.format(name="PackagedFilter"))
    write(tmp_path, "notes.txt", "not python\n")
    registry = registry_with(tmp_path)
    assert registry.get("PackagedFilter").source == str(tmp_path / "pkgplugin")  # type: ignore[union-attr]


def test_clash_with_in_tree_names_both_sources(tmp_path: Path) -> None:
    write(tmp_path, "nodename.py", FILTER_PLUGIN.format(name="NodeName"))
    with pytest.raises(DuplicatePluginError) as info:
        registry_with(tmp_path)
    assert "in-tree" in str(info.value) and str(tmp_path / "nodename.py") in str(info.value)
    assert info.value.exit_code == 2


def test_clash_between_out_of_tree_plugins(tmp_path: Path) -> None:
    write(tmp_path / "a", "one.py", FILTER_PLUGIN.format(name="Same"))
    write(tmp_path / "b", "two.py", FILTER_PLUGIN.format(name="Same"))
    with pytest.raises(DuplicatePluginError) as info:
        registry_with(tmp_path / "a", tmp_path / "b")
    assert str(tmp_path / "a" / "one.py") in str(info.value)
    assert str(tmp_path / "b" / "two.py") in str(info.value)


def test_same_folder_twice_is_loaded_once(tmp_path: Path) -> None:
    write(tmp_path, "zonefilter.py", FILTER_PLUGIN.format(name="ZoneFilter"))
    registry = build_registry([str(tmp_path), f"{tmp_path}/../{tmp_path.name}"], include_repo_plugins=False,
                              include_entry_points=False)
    assert registry.names() == ["ZoneFilter"]


def test_import_failure_names_the_file_and_the_exception(tmp_path: Path) -> None:
    write(tmp_path, "broken.py", "import no_such_module_anywhere\n")
    with pytest.raises(ConfigError) as info:
        registry_with(tmp_path)
    text = str(info.value)
    assert text.startswith(str(tmp_path / "broken.py") + ": cannot load plugin: ")
    assert "ModuleNotFoundError" in text and "no_such_module_anywhere" in text


def test_syntax_error(tmp_path: Path) -> None:
    write(tmp_path, "broken.py", "def (:\n")
    with pytest.raises(ConfigError, match=r"broken.py: cannot load plugin: SyntaxError"):
        registry_with(tmp_path)


@pytest.mark.parametrize(("text", "problem"), [
    ("X = 1\n", "not a plugin module: it lacks NAME, PLUGIN, factory"),
    ("NAME = 'A'\nPLUGIN = int\nfactory = print\n", "PLUGIN must be a class"),
    ("from pysched.framework.interface import FilterPlugin\n"
     "class A(FilterPlugin):\n    NAME = 'B'\n    def filter(self, s, p, n): return None\n"
     "NAME = 'A'\nPLUGIN = A\nfactory = lambda a, h: A()\n", "must agree"),
    ("from pysched.framework.interface import FilterPlugin\n"
     "class A(FilterPlugin):\n    NAME = 'A'\n"
     "NAME = 'A'\nPLUGIN = A\nfactory = lambda a, h: A()\n", "does not implement filter"),
])
def test_not_a_plugin_module(tmp_path: Path, text: str, problem: str) -> None:
    write(tmp_path, "odd.py", text)
    with pytest.raises(ConfigError, match=problem):
        registry_with(tmp_path)


def test_missing_plugin_dir(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such directory"):
        registry_with(tmp_path / "nope")


def test_repository_plugins_folder() -> None:
    folder = repo_plugins_dir()
    if not (REPO / "plugins").is_dir() or not (REPO / "pyproject.toml").is_file():
        pytest.skip("not a checkout")
    assert folder == REPO / "plugins"
    registry = build_registry([], include_entry_points=False, base=in_tree_registry())
    assert registry.get("LabelPreference").source == "plugins/labelpreference.py"  # type: ignore[union-attr]
    assert registry.get("Coscheduling") is not None and registry.get("FIFOSort") is not None


# ==================================================================================================
# Entry points


def make_distribution(root: Path, module: str, text: str, ep_name: str, dist: str = "acme-sched") -> None:
    write(root, f"{module}.py", text)
    info = root / f"{dist.replace('-', '_')}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\n{ep_name} = {module}\n")


def test_entry_point_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_distribution(tmp_path, "acme_zone_plugin", FILTER_PLUGIN.format(name="AcmeZone"), "acme-zone")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = registry_with(entry_points=True)
    spec = registry.get("AcmeZone")
    assert spec is not None
    assert spec.source == f"entry point {ENTRY_POINT_GROUP}:acme-zone (package acme-sched)"
    result = simulate(registry, enabling("AcmeZone", {"zone": "a"}))
    assert result.bindings["default/p"] == "n1"
    monkeypatch.delitem(sys.modules, "acme_zone_plugin", raising=False)


def _site(root: Path, group: str | None) -> Path:
    info = root / "site" / "acme_sched-1.0.dist-info"
    info.mkdir(parents=True)
    if group is not None:
        (info / "entry_points.txt").write_text(f"[{group}]\nx = acme_x\n")
    return root / "site"


@pytest.mark.parametrize(("layout", "expected"), [
    ("declares-the-group", True),
    ("other-groups-only", False),
    ("no-entry-points-file", False),
    ("missing-folder", False),
    ("zip-archive", True),
])
def test_entry_points_are_parsed_only_when_a_package_may_declare_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout: str, expected: bool) -> None:
    """importlib.metadata (its import and a parse of every package's file) is asked only when a package's
    entry_points.txt names the group, or the path holds what the quick look cannot read."""
    entry = {
        "declares-the-group": lambda: _site(tmp_path, ENTRY_POINT_GROUP),
        "other-groups-only": lambda: _site(tmp_path, "console_scripts"),
        "no-entry-points-file": lambda: _site(tmp_path, None),
        "missing-folder": lambda: tmp_path / "absent",
        "zip-archive": lambda: (tmp_path / "lib.zip", (tmp_path / "lib.zip").write_bytes(b"PK"))[0],
    }[layout]()
    monkeypatch.setattr(sys, "path", [str(entry)])
    assert discovery._may_declare_entry_points() is expected


def test_a_run_without_entry_points_never_imports_importlib_metadata() -> None:
    code = ("import sys\n"
            "from pysched.framework.discovery import build_registry\n"
            "from pysched.plugins import in_tree_registry\n"
            "build_registry([], base=in_tree_registry())\n"
            "print('importlib.metadata' in sys.modules)\n")
    assert python_lines(code) == ["False"]


def test_entry_point_clash_and_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_distribution(tmp_path, "acme_taint", FILTER_PLUGIN.format(name="TaintToleration"), "taints")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(DuplicatePluginError, match=r"by in-tree and by entry point pysched.plugins:taints "
                                                   r"\(package acme-sched\)"):
        registry_with(entry_points=True)

    class BrokenEntryPoint:
        name, value, dist = "broken", "acme_broken", None

        def load(self) -> Any:
            raise ImportError("cannot import name 'x'")

    monkeypatch.setattr(discovery, "_entry_points", lambda: [BrokenEntryPoint()])
    with pytest.raises(ConfigError, match=r"entry point pysched.plugins:broken: cannot load plugin acme_broken: "
                                          r"ImportError: cannot import name 'x'"):
        registry_with(entry_points=True)
    monkeypatch.delitem(sys.modules, "acme_taint", raising=False)


# ==================================================================================================
# Plugin faults and --fail-fast


def test_a_raising_plugin_is_an_error_status(tmp_path: Path) -> None:
    write(tmp_path, "raiser.py", RAISING_PLUGIN)
    registry = registry_with(tmp_path)
    result = simulate(registry, enabling("Raiser"))
    errors = [c for c in result.cycles if c.outcome == "Error"]
    assert errors, "the plugin raised on n2"
    assert errors[0].error == ("plugin Raiser raised in Filter for pod default/p on node n2: ValueError: boom")
    # the run went on: the second pod had its cycles too
    assert {c.pod for c in result.cycles} == {"default/p", "default/q"}


def test_fail_fast_stops_the_run(tmp_path: Path) -> None:
    write(tmp_path, "raiser.py", RAISING_PLUGIN)
    registry = registry_with(tmp_path)
    with pytest.raises(PyschedError) as info:
        simulate(registry, enabling("Raiser"), fail_fast=True)
    assert info.value.exit_code == 1
    assert "plugin Raiser raised in Filter for pod default/p on node n2" in str(info.value)


# ==================================================================================================
# pysched plugins


def cli_app() -> typer.Typer:
    from pysched.cli import plugins_cmd

    app = typer.Typer()

    @app.callback()
    def main() -> None:
        """pysched"""

    plugins_cmd.register(app)
    return app


def test_plugins_command_lists_sources_points_and_weights(tmp_path: Path) -> None:
    write(tmp_path, "zonefilter.py", FILTER_PLUGIN.format(name="ZoneFilter"))
    res = CliRunner().invoke(cli_app(), ["plugins", "--plugin-dir", str(tmp_path), "-o", "json"])
    assert res.exit_code == 0, res.output
    rows = {r["name"]: r for r in json.loads(res.stdout)["plugins"]}
    assert rows["ZoneFilter"] == {"name": "ZoneFilter", "source": str(tmp_path / "zonefilter.py"),
                                  "extension_points": ["filter"], "weight": None, "enabled": []}
    assert rows["TaintToleration"]["weight"] == 3 and rows["TaintToleration"]["source"] == "in-tree"
    assert rows["ImageLocality"]["enabled"] == ["score"]
    table = CliRunner().invoke(cli_app(), ["plugins", "--plugin-dir", str(tmp_path)])
    line = next(ln for ln in table.stdout.splitlines() if ln.startswith("ZoneFilter"))
    assert line.split() == ["ZoneFilter", str(tmp_path / "zonefilter.py"), "filter", "-", "disabled"]


def test_plugins_command_with_a_config(tmp_path: Path) -> None:
    write(tmp_path / "p", "zonefilter.py", FILTER_PLUGIN.format(name="ZoneFilter"))
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(json.dumps(enabling("ZoneFilter", {"zone": "b"})))
    res = CliRunner().invoke(cli_app(), ["plugins", "--plugin-dir", str(tmp_path / "p"), "--config", str(cfg),
                                         "-o", "json"])
    assert res.exit_code == 0, res.output
    rows = {r["name"]: r for r in json.loads(res.stdout)["plugins"]}
    assert rows["ZoneFilter"]["enabled"] == ["filter"]
    bad = CliRunner().invoke(cli_app(), ["plugins", "--plugin-dir", str(tmp_path / "nope")])
    assert bad.exit_code == 2 and "no such directory" in bad.output


def test_a_raising_queue_sort_stops_the_run(tmp_path: Path) -> None:
    write(tmp_path, "badsort.py", '''
from pysched.framework.interface import QueueSortPlugin

NAME = "BadSort"


class BadSort(QueueSortPlugin):
    NAME = NAME

    def less(self, a, b):
        raise KeyError("priority")


PLUGIN = BadSort


def factory(args, handle):
    return BadSort()
''')
    registry = registry_with(tmp_path)
    cfg = enabling("BadSort", point="queueSort")
    cfg["profiles"][0]["plugins"]["queueSort"]["disabled"] = [{"name": "*"}]
    with pytest.raises(PyschedError, match=r"plugin BadSort raised in QueueSort: KeyError: 'priority'"):
        simulate(registry, cfg)


# ==================================================================================================
# Permit "Wait": the waiting-pods map the scheduler keeps

PAIRER = '''
from pysched.framework.interface import PermitPlugin, PreBindPlugin
from pysched.framework.status import Code, Status

NAME = "Pairer"


class Pairer(PermitPlugin, PreBindPlugin):
    """Pods bind two at a time: the first waits for a partner, which lets it go."""

    NAME = NAME

    def __init__(self, args, handle):
        self.timeout = (args or {}).get("timeout", 30.0)
        self.handle = handle

    def permit(self, state, pod, node_name):
        if pod.name == "explode":
            raise RuntimeError("permit exploded")
        waiting = self.handle.waiting_pods()
        if waiting:
            assert self.handle.get_waiting_pod(waiting[0].pod.key) is waiting[0]
            assert waiting[0].pending_plugins() == [NAME]
            self.handle.allow(waiting[0].pod.key, NAME)
            return None, 0
        return Status(Code.Wait, "waiting for a partner"), self.timeout

    def pre_bind(self, state, pod, node_name):
        if pod.name == "badbind":
            raise ValueError("cannot pre-bind")
        return None


PLUGIN = Pairer


def factory(args, handle):
    return Pairer(args, handle)
'''


def pair_objs(*names: str) -> list[dict]:
    objs = nodes_and_pod()[:3]
    for i, name in enumerate(names):
        objs.append({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": name, "namespace": "default",
                                  "creationTimestamp": f"2026-01-01T00:00:{i:02d}Z"},
                     "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "3"}}}]}})
    return objs


def simulate_objs(registry: Registry, cfg_raw: dict, objs: list[dict], **opts: Any) -> Any:
    cfg = build_config(cfg_raw, registry)
    cluster = build_cluster([(Document("t", i + 1, o), o, "") for i, o in enumerate(objs)])
    return Simulation(cluster, cfg, registry, SimulationOptions(trace=True, **opts)).run()


def pairer_config(args: dict | None = None) -> dict:
    cfg = enabling("Pairer", args, point="multiPoint")
    return cfg


def test_waiting_pod_is_reserved_then_allowed(tmp_path: Path) -> None:
    write(tmp_path, "pairer.py", PAIRER)
    registry = registry_with(tmp_path)
    result = simulate_objs(registry, pairer_config(), pair_objs("first", "second", "third"))
    by_pod = {c.pod: c for c in result.cycles if c.pass_no == 1}
    first, second = by_pod["default/first"], by_pod["default/second"]
    assert first.outcome == second.outcome == "Scheduled"
    assert first.node != second.node  # first was reserved on its node when second was placed (3 of 4 cpus)
    assert first.message == "waited on Permit (Pairer); allowed after the cycle of pod default/second"
    third = [c for c in result.cycles if c.pod == "default/third"]
    assert [c.outcome for c in third] == ["Unschedulable", "Unschedulable"]
    assert third[-1].message == ("Pairer: waiting for a partner (still waiting on Permit at the end of pass 2; "
                                 "kube-scheduler rejects the pod after 30s)")
    assert sorted(result.bindings) == ["default/first", "default/second"]
    assert result.state.pod_node.get("default/third") is None  # unreserved at the end of the pass


def test_zero_timeout_rejects_at_once(tmp_path: Path) -> None:
    write(tmp_path, "pairer.py", PAIRER)
    registry = registry_with(tmp_path)
    result = simulate_objs(registry, pairer_config({"timeout": 0}), pair_objs("first", "second"), passes=1)
    first = result.cycles[0]
    assert (first.outcome, first.message) == ("Unschedulable",
                                              "Pairer: rejected due to timeout after waiting 0s at plugin Pairer")


def test_permit_and_prebind_faults(tmp_path: Path) -> None:
    write(tmp_path, "pairer.py", PAIRER)
    registry = registry_with(tmp_path)
    result = simulate_objs(registry, pairer_config(), pair_objs("explode"), passes=1)
    c = result.cycles[0]
    assert c.outcome == "Error" and c.node is None
    assert c.error.startswith("plugin Pairer raised in Permit for pod default/explode on node ")
    assert not result.state.pod_node.get("default/explode")
    # a waiting pod whose binding fails once it is allowed: the error lands on its own cycle
    result = simulate_objs(registry, pairer_config(), pair_objs("badbind", "partner"), passes=1)
    bad = result.cycles[0]
    assert bad.outcome == "Error" and "plugin Pairer raised in PreBind for pod default/badbind" in bad.error
    assert result.bindings == {"default/partner": result.cycles[1].node}
    with pytest.raises(PyschedError, match="the cycle of pod default/badbind"):
        simulate_objs(registry, pairer_config(), pair_objs("badbind", "partner"), passes=1, fail_fast=True)
