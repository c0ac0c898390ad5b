"""Snapshot loading: every shape kubectl prints, and admission as the API server does it."""

from __future__ import annotations

import gzip
import io
import json
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings, strategies as st

from pysched.snapshot.loader import load_snapshot

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def pod(name: str, **spec) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ns"},
            "spec": {"containers": [{"name": "c", "image": "i"}], **spec}}


def write(tmp: Path, name: str, text: str | bytes) -> str:
    p = tmp / name
    p.write_bytes(text if isinstance(text, bytes) else text.encode())
    return str(p)


@pytest.mark.parametrize("shape", ["multi-doc-yaml", "yaml-list", "json-list", "typed-list", "gzip"])
def test_shapes(tmp_path: Path, shape: str) -> None:
    objs = [NODE, pod("a"), pod("b")]
    if shape == "multi-doc-yaml":
        path = write(tmp_path, "s.yaml", yaml.safe_dump_all(objs))
    elif shape == "yaml-list":
        path = write(tmp_path, "s.yaml", yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objs}))
    elif shape == "json-list":
        path = write(tmp_path, "s.json", json.dumps({"apiVersion": "v1", "kind": "List", "items": objs}))
    elif shape == "typed-list":
        pods = [{k: v for k, v in p.items() if k not in ("kind", "apiVersion")} for p in objs[1:]]
        docs = [{"apiVersion": "v1", "kind": "NodeList", "items": [NODE]},
                {"apiVersion": "v1", "kind": "PodList", "items": pods}]
        path = write(tmp_path, "s.yaml", yaml.safe_dump_all(docs))
    else:
        path = write(tmp_path, "s.yaml.gz", gzip.compress(yaml.safe_dump_all(objs).encode()))
    cluster = load_snapshot([path])
    assert [n.name for n in cluster.nodes] == ["n1"]
    assert [p.key for p in cluster.pods] == ["ns/a", "ns/b"]


def test_folder_is_read_recursively_and_stdin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "sub").mkdir()
    write(tmp_path, "nodes.yaml", yaml.safe_dump(NODE))
    write(tmp_path / "sub", "pods.json", json.dumps(pod("a")))
    write(tmp_path, "notes.txt", "not a snapshot")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(yaml.safe_dump(pod("b")).encode())))
    cluster = load_snapshot([str(tmp_path), "-"])
    assert sorted(p.key for p in cluster.pods) == ["ns/a", "ns/b"]


def test_ignored_kinds_are_listed_once(tmp_path: Path) -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "ns"}}
    path = write(tmp_path, "s.yaml", yaml.safe_dump_all([NODE, cm, {**cm, "metadata": {"name": "y"}}]))
    cluster = load_snapshot([path])
    assert cluster.ignored_kinds == ["v1/ConfigMap"]
    assert any("2 object(s) of kind v1/ConfigMap" in w for w in cluster.warnings)


def test_finished_pods_are_ignored(tmp_path: Path) -> None:
    done = {**pod("done"), "status": {"phase": "Succeeded"}}
    failed = {**pod("failed"), "status": {"phase": "Failed"}}
    cluster = load_snapshot([write(tmp_path, "s.yaml", yaml.safe_dump_all([NODE, done, failed, pod("p")]))])
    assert [p.key for p in cluster.pods] == ["ns/p"]


PC = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass"}


@pytest.mark.parametrize(("classes", "spec", "priority", "policy"), [
    ([], {}, 0, "PreemptLowerPriority"),
    ([{"name": "high", "value": 1000}], {"priorityClassName": "high"}, 1000, "PreemptLowerPriority"),
    ([{"name": "d", "value": 7, "globalDefault": True}], {}, 7, "PreemptLowerPriority"),
    ([{"name": "d", "value": 7, "globalDefault": True}], {"priority": 3}, 3, "PreemptLowerPriority"),
    ([{"name": "nev", "value": 5, "preemptionPolicy": "Never"}], {"priorityClassName": "nev"}, 5, "Never"),
    ([], {"priorityClassName": "system-node-critical"}, 2000001000, "PreemptLowerPriority"),
], ids=["none", "class", "global-default", "own-priority-kept", "class-policy", "builtin"])
def test_priority_admission(tmp_path: Path, classes, spec, priority, policy) -> None:
    docs = [NODE] + [{**PC, "metadata": {"name": c["name"]}, **{k: v for k, v in c.items() if k != "name"}}
                     for c in classes] + [pod("p", **spec)]
    cluster = load_snapshot([write(tmp_path, "s.yaml", yaml.safe_dump_all(docs))])
    (p,) = cluster.pods
    assert (p.priority, p.preemption_policy) == (priority, policy)


def test_missing_priority_class_rejects_only_that_pod(tmp_path: Path) -> None:
    docs = [NODE, pod("bad", priorityClassName="nope"), pod("good")]
    cluster = load_snapshot([write(tmp_path, "s.yaml", yaml.safe_dump_all(docs))])
    assert [p.key for p in cluster.pods] == ["ns/good"]
    assert cluster.rejected_pods == [("ns/bad", "no PriorityClass with name nope was found")]


def test_pod_on_unknown_node_is_on_no_node(tmp_path: Path) -> None:
    docs = [NODE, pod("ghost", nodeName="gone")]
    cluster = load_snapshot([write(tmp_path, "s.yaml", yaml.safe_dump_all(docs))])
    assert cluster.pods == []
    assert any("gone" in w for w in cluster.warnings)


def test_json_documents_inside_a_yaml_stream(tmp_path: Path) -> None:
    """kubectl -o json outputs joined with '---' are parsed as JSON; YAML documents beside them still
    load, and document numbers and lines stay those of the whole stream."""
    text = (yaml.safe_dump(NODE) + "---   \n" + json.dumps(pod("a"), indent=1) + "\n---\n"
            + yaml.safe_dump(pod("b")))
    cluster = load_snapshot([write(tmp_path, "s.yaml", text)])
    assert [p.key for p in cluster.pods] == ["ns/a", "ns/b"]
    from pysched.snapshot.loader import parse_documents
    docs = list(parse_documents(text, "s.yaml"))
    assert [d.index for d in docs] == [1, 2, 3]
    assert text.splitlines()[docs[1].line - 1].startswith("{")
    assert text.splitlines()[docs[2].line - 1].startswith("apiVersion")


def test_labels_remembered_valid_do_not_hide_a_bad_one(tmp_path: Path) -> None:
    """Label keys and values found valid are remembered; a later label of another type (unhashable) or
    an invalid one is still found and named."""
    from pysched.errors import InputError
    good = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"zone": "a"}}}
    bad = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n2", "labels": {"zone": ["a"]}}}
    path = write(tmp_path, "s.json", json.dumps({"apiVersion": "v1", "kind": "List", "items": [good, bad]}))
    with pytest.raises(InputError, match=r"metadata\.labels\.zone"):
        load_snapshot([path])
    bad["metadata"]["labels"] = {"zone": "-a"}
    path = write(tmp_path, "s.json", json.dumps({"apiVersion": "v1", "kind": "List", "items": [good, bad]}))
    with pytest.raises(InputError, match=r"metadata\.labels\.zone"):
        load_snapshot([path], validate="strict")


@pytest.mark.parametrize("mode", ["warn", "ignore"])
@pytest.mark.parametrize("value", [1, ["a"], None, True], ids=["int", "list", "null", "bool"])
def test_pod_labels_checked_unless_the_schema_check_found_the_pod_clean(tmp_path: Path, mode: str,
                                                                        value: object) -> None:
    """A clean pod's labels are not checked again by the parser; any other pod's still are, after clean
    ones of the same window."""
    from pysched.errors import InputError
    clean = [{**pod(f"p{i}"), "metadata": {"name": f"p{i}", "namespace": "ns", "labels": {"app": "web"}}}
             for i in range(3)]
    bad = {**pod("bad"), "metadata": {"name": "bad", "namespace": "ns", "labels": {"app": "web", "tier": value}}}
    path = write(tmp_path, "s.json", json.dumps({"apiVersion": "v1", "kind": "List", "items": [NODE, *clean, bad]}))
    with pytest.raises(InputError, match=r"Pod ns/bad: metadata\.labels\.tier: label values must be strings"):
        load_snapshot([path], validate=mode)
    path = write(tmp_path, "s.json", json.dumps({"apiVersion": "v1", "kind": "List", "items": [NODE, *clean]}))
    cluster = load_snapshot([path], validate=mode)
    assert [p.labels for p in cluster.pods] == [{"app": "web"}] * 3


def test_collector_frozen_after_a_large_load_releases_earlier_garbage(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A large load freezes what is alive (gc.freeze); the next load unfreezes and collects first, so
    cyclic garbage that held an earlier cluster is freed instead of frozen for good (tests and several
    snapshots in one process would otherwise grow without bound)."""
    import gc
    import weakref

    from pysched.snapshot import loader

    class Holder:  # cyclic garbage that keeps a cluster alive, as a finished simulation does
        def __init__(self, cluster: object) -> None:
            self.cluster, self.me = cluster, self

    monkeypatch.setattr(loader, "FREEZE_ABOVE", 10)
    path = write(tmp_path, "s.json", json.dumps({"apiVersion": "v1", "kind": "List",
                                                 "items": [NODE] + [pod(f"p{i}") for i in range(20)]}))
    try:
        refs = []
        for _ in range(3):
            holder = Holder(load_snapshot([path]))
            assert gc.isenabled() and gc.get_freeze_count() > 0
            refs.append(weakref.ref(holder))
            del holder
        load_snapshot([path])
        assert [r() for r in refs] == [None, None, None]
    finally:
        gc.unfreeze()


def test_a_load_keeps_a_freeze_it_did_not_make(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the command line froze after its imports (cli/main.py) holds no cluster: a load leaves it frozen
    instead of unfreezing and collecting every object of the process; a freeze a load made is still undone
    by the next load (the test above)."""
    import gc

    from pysched.snapshot import loader

    monkeypatch.setattr(loader, "_load_froze", False)
    path = write(tmp_path, "s.json", json.dumps({"apiVersion": "v1", "kind": "List", "items": [NODE, pod("p")]}))
    kept = [[]]
    kept[0].append(kept)  # a cycle, frozen below: collected only if the load unfroze
    gc.freeze()
    try:
        load_snapshot([path])
        assert gc.isenabled() and gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


@pytest.mark.parametrize("mode", ["warn", "ignore"])
@pytest.mark.parametrize("value", [1, ["a"], None, True], ids=["int", "list", "null", "bool"])
def test_node_labels_checked_unless_the_schema_check_found_the_node_clean(tmp_path: Path, mode: str,
                                                                          value: object) -> None:
    """As for pods: a clean node's labels are not checked again by the parser (fails when the loader
    tells the parser they are valid regardless of the schema check)."""
    from pysched.errors import InputError
    nodes = [{**NODE, "metadata": {"name": f"n{i}", "labels": {"zone": "a"}}} for i in range(3)]
    bad = {**NODE, "metadata": {"name": "bad", "labels": {"zone": "a", "rack": value}}}
    path = write(tmp_path, "s.json", json.dumps({"apiVersion": "v1", "kind": "List", "items": [*nodes, bad]}))
    with pytest.raises(InputError, match=r"Node bad: metadata\.labels\.rack: label values must be strings"):
        load_snapshot([path], validate=mode)
    path = write(tmp_path, "s.json", json.dumps({"apiVersion": "v1", "kind": "List", "items": nodes}))
    assert [n.labels for n in load_snapshot([path], validate=mode).nodes] == [{"zone": "a"}] * 3


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="-\n \tx", max_size=30))
def test_document_separators_are_the_regular_expressions_matches(text: str) -> None:
    """The separators found where str.find finds '---' are the bare '---' lines the pattern's own scan
    finds (fails when the search skips a candidate or misreads an overlap such as '----')."""
    from pysched.snapshot.reader import _SEPARATOR_TAIL, document_separators
    expected = [(m.start(), m.end()) for m in _SEPARATOR_TAIL.finditer(text)
                if m.start() == 0 or text[m.start() - 1] == "\n"]
    assert document_separators(text) == expected


def _leading_reference(items: list) -> int:
    """What _flatten yielded item by item before: dicts that are no *List holding items, from the first."""
    n = 0
    for item in items:
        k = item.get("kind") if type(item) is dict else None
        if type(item) is not dict or (isinstance(k, str) and k.endswith("List") and "items" in item):
            break
        n += 1
    return n


_POD = {"kind": "Pod", "metadata": {"name": "p"}}
_LEADING_CASES = {
    "empty": [],
    "objects": [_POD, {"kind": "Node"}, _POD],
    "an object without kind": [_POD, {"kind": "Node"}, {}],
    "a kind holding List": [{"kind": "ListWatcher"}, _POD, {"kind": "PodListX", "items": []}],
    "a nested list": [_POD, {"kind": "List", "items": []}, _POD],
    "a PodList first": [{"kind": "PodList", "items": [_POD]}, _POD],
    "a List without items": [_POD, {"kind": "PodList"}, _POD],
    "no dict": [_POD, ["x"], _POD],
    "no object": [_POD, None],
    "an unhashable kind": [_POD, {"kind": ["List"]}, {"kind": "ConfigMapList", "items": []}],
    "a kind no string": [{"kind": 1}, {"kind": None}, _POD],
}


@pytest.mark.parametrize("items", list(_LEADING_CASES.values()), ids=list(_LEADING_CASES))
def test_leading_objects_as_item_by_item(items: list, monkeypatch: pytest.MonkeyPatch) -> None:
    """The leading plain objects of a List, judged at once where it can be: as many as item by item, and
    _flatten yields them with their paths, then the rest, as the stack alone yields them all."""
    from pysched.snapshot import loader

    assert loader._leading_objects(items) == _leading_reference(items)
    doc = loader.Document("f.json", 1, {"kind": "List", "items": items})
    errors: list = []
    got = [(obj, where) for _, obj, where in loader._flatten(doc, doc.obj, "", errors)]
    first = _leading_reference(items)
    assert got[:first] == [(item, f"items[{i}]") for i, item in enumerate(items[:first])]
    monkeypatch.setattr(loader, "_leading_objects", lambda items: 0)  # every item through the stack
    stacked: list = []
    assert got == [(obj, where) for _, obj, where in loader._flatten(doc, doc.obj, "", stacked)]
    assert [str(e) for e in errors] == [str(e) for e in stacked]


# (text, file name, whether orjson reads it with ORJSON_FROM 0: Document.exact)
EXACT_CASES = {
    "json list": ('{"kind": "List", "items": [{"kind": "Pod"}]}', "a.json", True),
    "json with NaN": ('{"kind": "Pod", "x": NaN}', "a.json", False),  # the standard decoder's value
    "json with a 20-digit integer": ('{"kind": "Pod", "x": 12345678901234567890}', "a.json", False),
    "two json values": ('{"kind": "Pod"} {"kind": "Node"}', "a.json", False),
    "yaml": ("kind: Pod\n", "a.yaml", False),
    "json inside a yaml stream": ('{"kind": "Pod"}\n---\n{"kind": "Node"}\n', "a.yaml", False),
}


@pytest.mark.parametrize(("text", "name", "exact"), list(EXACT_CASES.values()), ids=list(EXACT_CASES))
def test_documents_read_by_orjson_are_exact(text: str, name: str, exact: bool,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from pysched.snapshot import loader, reader

    monkeypatch.setattr(reader, "ORJSON_FROM", 0)
    docs = list(loader.parse_documents(text, name))
    assert docs and all(d.exact is exact for d in docs)
