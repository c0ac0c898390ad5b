"""The batch form of schema validation (issue 17) gives exactly what the per-object walk gives.

``validation.Validator`` first asks of a window of objects whether the walk would find anything at all
(``_batch_clean``, ``_names_clean``) and walks only the objects of windows, or parts, that have a
culprit. These tests hold it to the walk: the same issues, in the same order, for varied objects (unknown
keys and near-miss typos at any depth, values of every type where another belongs, None and empty
containers, names and namespaces the API server refuses); the same warnings and errors (paths, did-you-mean,
line numbers) through the loader with and without the batch check; and the batch check actually taken for
clean objects, so that the fast path cannot quietly die.
"""

from __future__ import annotations

import copy
import random
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

from pysched.errors import InputError
from pysched.model import labels
from pysched.snapshot import loader, validation
from pysched.snapshot.loader import load_snapshot
from tests.builders import key_paths

from .test_fuzz import SEEDS, VALUES

SETTINGS = settings(max_examples=120, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

NAMES = st.sampled_from(["web-1", "Web-1", "a.b", "a..b", "-a", "x" * 63, "x" * 64, "y" * 253, "y" * 254, ".", "..",
                         "a/b", "a%b", "n\u202e1", "", "ns-é", "1abc", "abc"])




def _typo(key: str, rnd: random.Random) -> str:
    """A near miss of a field name (one letter dropped, doubled or changed), or the name in another case."""
    if not key:
        return "x"
    i = rnd.randrange(len(key))
    how = rnd.choice(["drop", "double", "change", "case"])
    if how == "drop":
        return key[:i] + key[i + 1:] or "x"
    if how == "double":
        return key[:i] + key[i] * 2 + key[i + 1:]
    if how == "change":
        return key[:i] + rnd.choice("aeioz") + key[i + 1:]
    return key.swapcase()


def _mutate(obj: dict, data: st.DataObject) -> dict:
    """``obj`` with 0-3 changes anywhere below apiVersion/kind: a value replaced (by anything, None, an
    empty container), a key renamed to a near miss, a key or item added, a name or namespace changed."""
    obj = copy.deepcopy(obj)
    rnd = data.draw(st.randoms(use_true_random=False), label="random")
    for _ in range(data.draw(st.integers(0, 3), label="mutations")):
        how = data.draw(st.sampled_from(["replace", "rename", "add", "name", "namespace", "none"]), label="how")
        if how in ("name", "namespace"):
            meta = obj.setdefault("metadata", {}) if isinstance(obj.get("metadata"), dict) else None
            if meta is not None:
                meta[how] = data.draw(NAMES, label=how)
            continue
        paths = [p for p in key_paths(obj) if len(p) > 0 and p not in (("apiVersion",), ("kind",))]
        if not paths:
            break
        path = rnd.choice(paths)
        parent: Any = obj
        for key in path[:-1]:
            parent = parent[key]
        last = path[-1]
        if how == "rename" and isinstance(last, str):
            parent[_typo(last, rnd)] = parent.pop(last)
        elif how == "add" and isinstance(parent[last], dict):
            key = data.draw(st.text(max_size=12) | st.integers(-2, 2), label="key")
            parent[last][key] = data.draw(VALUES, label="value")
        elif how == "add" and isinstance(parent[last], list):
            parent[last].append(data.draw(VALUES | st.none(), label="item"))
        elif how == "none":
            parent[last] = None
        else:
            parent[last] = data.draw(VALUES, label="value")
    return obj



def _walk_issues(obj: dict) -> list[validation.Issue]:
    return validation.validate_object(obj, obj["apiVersion"], obj["kind"])


def _fields(objects: list[dict]) -> tuple[list[Any], list[Any], list[Any], list[Any] | None]:
    """The objects' kind, apiVersion and metadata (and their names), as the loader reads them for the
    validator."""
    fields = loader._fields(objects)
    assert fields is not None
    kinds, apis, metas, names = fields
    assert (kinds, apis, metas) == ([o.get("kind") for o in objects], [o.get("apiVersion") for o in objects],
                                    [o.get("metadata") for o in objects])
    assert names is None or names == [m.get("name") for m in metas]
    assert names is not None or any(type(m) is not dict for m in metas)
    return fields


@SETTINGS
@given(st.data(), st.sampled_from([(4, 1), (8, 2), (128, 16)]), st.booleans(), st.booleans())
def test_validator_gives_exactly_the_walks_issues(data: st.DataObject, sizes: tuple[int, int], plain: bool,
                                                  given_fields: bool) -> None:
    # the mutations put only what JSON and YAML readers make (plain dicts, lists, str, int, float, bool, None);
    # given_fields: the objects' kind, apiVersion and metadata handed over as the loader does
    count = data.draw(st.integers(1, 24), label="objects")
    objects = [_mutate(data.draw(st.sampled_from(SEEDS), label="seed"), data) for _ in range(count)]
    expected = [_walk_issues(obj) for obj in objects]
    saved = validation.WINDOW, validation.PART
    validation.WINDOW, validation.PART = sizes
    try:
        checker = validation.Validator(objects, plain=plain, fields=_fields(objects) if given_fields else None)
        assert [checker.issues(obj, at) for at, obj in enumerate(objects)] == expected
        for at, obj in enumerate(objects):  # clean: no issue, and the loader may skip its label value check
            if checker.clean(obj, at):
                assert expected[at] == []
                label_map = (obj.get("metadata") or {}).get("labels") or {}
                assert all(labels.label_value_error(v) is None for v in label_map.values())
                assert all(labels.label_key_error(k) is None for k in label_map)
    finally:
        validation.WINDOW, validation.PART = saved


@SETTINGS
@given(st.data(), st.booleans())
def test_batch_clean_only_when_the_walk_finds_nothing(data: st.DataObject, plain: bool) -> None:
    obj = _mutate(data.draw(st.sampled_from(SEEDS), label="seed"), data)
    code = validation.model_of(obj["apiVersion"], obj["kind"])
    assert code is not None
    groups = {code: [obj]}
    if validation._batch_clean(groups, plain):
        found: list[validation.Issue] = []
        validation._walk(obj, code, validation._schema()[0], found)
        assert found == []
        if validation._names_clean(groups):
            assert list(validation._name_issues(obj, obj["kind"])) == []


def test_clean_objects_take_the_batch_path() -> None:
    # a test that fails when the fast path is dead: every seed is clean, and the validator says so
    # without walking any of them
    objects = [copy.deepcopy(s) for s in SEEDS for _ in range(3)]
    checker = validation.Validator(objects)
    walked: list[object] = []
    real = validation.validate_object
    try:
        validation.validate_object = lambda obj, *a: walked.append(obj) or real(obj, *a)  # type: ignore[assignment]
        assert all(checker.issues(obj, at) == [] for at, obj in enumerate(objects))
    finally:
        validation.validate_object = real  # type: ignore[assignment]
    assert walked == []


CULPRITS = [
    ("typo-in-list-item", ("spec", "containers", 0, "resources"), {"request": {"cpu": "1"}},
     "unknown field 'request' (did you mean 'requests'?)"),
    ("int-for-string", ("spec", "nodeName"), 5, "expected a string, got int 5"),
    ("string-item-in-object-list", ("spec", "containers"), ["c"], "expected a mapping (Container), got string 'c'"),
    ("bool-in-map-of-quantities", ("spec", "overhead"), {"cpu": True}, "expected a quantity (string or number), "
                                                                         "got boolean true"),
    ("mapping-for-list-of-strings", ("spec", "topologySpreadConstraints", 0, "matchLabelKeys"), {"a": "b"},
     "expected a list, got a mapping"),
]


@pytest.mark.parametrize(("path", "value", "message"), [c[1:] for c in CULPRITS], ids=[c[0] for c in CULPRITS])
def test_one_culprit_among_many_is_named_and_the_rest_spared(path: tuple, value: object, message: str) -> None:
    pending = next(s for s in SEEDS if s["metadata"]["name"] == "web-1")
    objects = [copy.deepcopy(pending) for _ in range(300)]
    for i, obj in enumerate(objects):
        obj["metadata"]["name"] = f"web-{i}"
    parent: Any = objects[150]
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    checker = validation.Validator(objects)
    issues = [checker.issues(obj, at) for at, obj in enumerate(objects)]
    assert [i for i, found in enumerate(issues) if found] == [150]
    assert [x.message for x in issues[150]] == [message]
    assert issues[150] == _walk_issues(objects[150])
    # only the part holding the culprit was walked
    assert checker._clean.count(1) == 300 - 1 - (validation.PART - 1)


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data(), mode=st.sampled_from(["warn", "strict"]))
def test_loader_says_the_same_with_and_without_the_batch_check(data: st.DataObject, mode: str,
                                                               tmp_path_factory: pytest.TempPathFactory) -> None:
    docs = [_mutate(data.draw(st.sampled_from(SEEDS), label="seed"), data)
            for _ in range(data.draw(st.integers(1, 6), label="docs"))]
    for i, doc in enumerate(docs):  # distinct objects (duplicates are another error)
        if isinstance(doc.get("metadata"), dict) and isinstance(doc["metadata"].get("name"), str):
            doc["metadata"]["name"] += f"-{i}" if doc["metadata"]["name"] else ""
    path = tmp_path_factory.mktemp("batch") / "snap.yaml"
    path.write_text(yaml.safe_dump_all(docs, allow_unicode=True))

    def outcome() -> tuple[str, list[str]]:
        try:
            return "ok", load_snapshot([str(path)], validate=mode).warnings
        except InputError as e:
            return "error", [str(e)]

    fast = outcome()
    real = validation._batch_clean
    try:
        validation._batch_clean = lambda groups, plain=False: False  # type: ignore[assignment]
        walked = outcome()
    finally:
        validation._batch_clean = real  # type: ignore[assignment]
    assert fast == walked


@SETTINGS
@given(st.lists(st.text(max_size=70) | st.sampled_from(["a" * 63, "a" * 64, "-a", "a-", "a_b.c", "", "é", "a\nb",
                                                       "web-1", "a.b", "a..b", "x" * 253, "a\n"]), max_size=8))
def test_joined_checks_of_label_values_and_names_are_the_one_by_one_checks(values: list[str]) -> None:
    # the window's label values (and names) are checked with one match of their newline-joined text
    objs = [{"metadata": {"labels": {str(i): v}}} for i, v in enumerate(values)]
    one_by_one = all(labels.label_value_error(v) is None for v in values)
    assert validation._names_clean({"V1ConfigMap": objs}) == one_by_one, values
    for rule in (validation.DNS1123_LABEL, validation.DNS1123_SUBDOMAIN, validation.DNS1035_LABEL):
        names = [v for v in values if v]
        if names and max(map(len, names)) <= rule.max_len:
            expected = all(rule.pattern.fullmatch(v) for v in names)
            assert validation._all_match(validation._joined(rule.fmt), names) == expected, (rule.fmt, names)
            assert validation._names_valid(rule, names) == expected, (rule.fmt, names)


@SETTINGS
@given(st.lists(st.text(alphabet="abz09-.\nA_é/", min_size=1, max_size=12), min_size=1, max_size=6))
def test_names_checked_without_the_pattern_are_checked_as_with_it(names: list[str]) -> None:
    for rule in (validation.DNS1123_LABEL, validation.DNS1123_SUBDOMAIN, validation.DNS1035_LABEL):
        expected = all(rule.pattern.fullmatch(v) for v in names)
        assert validation._names_valid(rule, names) == expected, (rule.fmt, names)


@SETTINGS
@given(st.lists(st.text(alphabet="abz09-.\né", min_size=1, max_size=300) | st.sampled_from(
    ["x" * 63, "x" * 64, "y" * 253, "y" * 254, "a." * 126 + "b", "a." * 127, "-" * 64, "a" * 64 + "\n"]),
    min_size=1, max_size=5))
def test_names_checked_without_the_pattern_are_checked_with_their_length(names: list[str]) -> None:
    # the longest name is found by the longest run without a line break, not by the length of each
    for rule in (validation.DNS1123_LABEL, validation.DNS1123_SUBDOMAIN, validation.DNS1035_LABEL):
        expected = all(rule.pattern.fullmatch(v) and len(v) <= rule.max_len for v in names)
        assert validation._names_valid(rule, names) == expected, (rule.fmt, names)


@SETTINGS
@given(st.data(), st.booleans())
def test_fields_read_from_the_items_give_the_walks_issues(data: st.DataObject, plain: bool) -> None:
    # pods of one window whose specs set different optional fields: the batch check reads the values of
    # such a type in one pass over the mappings' items (``_columns``), and must find what the walk finds
    pods = [s for s in SEEDS if s["kind"] == "Pod"]
    count = data.draw(st.integers(2, 12), label="objects")
    objects = [_mutate(data.draw(st.sampled_from(pods), label="seed"), data) for _ in range(count)]
    expected = [_walk_issues(obj) for obj in objects]
    checker = validation.Validator(objects, plain=plain)
    assert [checker.issues(obj, at) for at, obj in enumerate(objects)] == expected
    assert all(issues == [] for flag, issues in zip(checker.flags(), expected, strict=True) if flag)


def test_sparse_fields_are_read_from_the_items_and_dense_ones_looked_up() -> None:
    # a test that fails when either way of reading the values is dead, or reads other values
    web = next(s for s in SEEDS if s["metadata"]["name"] == "web-1")["spec"]
    db = next(s for s in SEEDS if s["metadata"]["name"] == "db-0")["spec"]
    plan = validation._schema()[0]["V1PodSpec"].plan
    sparse = [web] + [db] * 7
    keys = set().union(*sparse)
    columns = validation._columns(sparse, keys, plan)
    assert columns is not None
    assert {k: columns[k] for k in keys} == {k: [d[k] for d in sparse if k in d] for k in keys}
    assert validation._columns([web] * 8, set(web), plan) is None
    assert validation._batch_clean({"V1PodSpec": copy.deepcopy(sparse)}, True)
    bad = copy.deepcopy(sparse)
    bad[5]["nodeName"] = 5
    assert not validation._batch_clean({"V1PodSpec": bad}, True)


# values where an absent field (None), an empty container or another value stands, in some of the objects
# of a window only: the batch check drops the absent ones only where there are any
HOLES = [
    ("containers-none-item", ("spec", "containers"), [None]),
    ("containers-empty", ("spec", "containers"), []),
    ("containers-list-item", ("spec", "containers"), [["name"]]),
    ("containers-text-item", ("spec", "containers"), ["name"]),
    ("tolerations-none", ("spec", "tolerations"), None),
    ("tolerations-none-item", ("spec", "tolerations"), [None, {"key": "a", "operator": "Exists"}]),
    ("affinity-empty", ("spec", "affinity"), {}),
    ("affinity-none", ("spec", "affinity"), None),
    ("affinity-list", ("spec", "affinity"), []),
    ("node-selector-empty", ("spec", "nodeSelector"), {}),
    ("node-selector-none-value", ("spec", "nodeSelector"), {"a": None}),
    ("node-selector-int-value", ("spec", "nodeSelector"), {"a": 1}),
    ("spec-none", ("spec",), None),
    ("spec-empty", ("spec",), {}),
    ("spec-list", ("spec",), []),
    ("status-none", ("status",), None),
    ("overhead-none-value", ("spec", "overhead"), {"cpu": None}),
    ("overhead-list-value", ("spec", "overhead"), {"cpu": []}),
]


@pytest.mark.parametrize(("path", "value"), [c[1:] for c in HOLES], ids=[c[0] for c in HOLES])
@pytest.mark.parametrize("where", ["one", "all"])
@pytest.mark.parametrize("plain", [True, False], ids=["plain", "exact"])
def test_absent_values_and_empty_containers_checked_as_the_walk_checks_them(path: tuple, value: object, where: str,
                                                                             plain: bool) -> None:
    pending = next(s for s in SEEDS if s["metadata"]["name"] == "web-1")
    objects = [copy.deepcopy(pending) for _ in range(8)]
    for i, obj in enumerate(objects):
        obj["metadata"]["name"] = f"web-{i}"
        if where == "all" or i == 3:
            parent: Any = obj
            for key in path[:-1]:
                parent = parent[key]
            parent[path[-1]] = copy.deepcopy(value)
    expected = [_walk_issues(obj) for obj in objects]
    checker = validation.Validator(objects, plain=plain)
    assert [checker.issues(obj, at) for at, obj in enumerate(objects)] == expected
    flags = checker.flags()
    assert all(issues == [] for flag, issues in zip(flags, expected, strict=True) if flag)
    if all(issues == [] for issues in expected):  # (one culprit sends its whole part to the walk)
        assert all(flags)


@SETTINGS
@given(st.lists(st.text(alphabet="aZ09-_.\n é/", max_size=66) | st.sampled_from(["a" * 63, "a" * 64, "", "-"]),
                min_size=1, max_size=6, unique=True))
def test_label_values_checked_without_the_pattern_are_checked_as_with_it(values: list[str]) -> None:
    # the window's new label values: one join, str.translate and substring searches, not the pattern
    expected = all(labels.label_value_error(v) is None for v in values)
    assert validation._label_values_match(values) == expected, values


TOP_CULPRITS = [  # what the batch check leaves to the metadata check for objects read from files
    ("name-int", ("metadata", "name"), 5), ("name-zero", ("metadata", "name"), 0),
    ("name-false", ("metadata", "name"), False), ("name-list", ("metadata", "name"), []),
    ("name-empty", ("metadata", "name"), ""), ("name-upper", ("metadata", "name"), "Web-1"),
    ("namespace-int", ("metadata", "namespace"), 7), ("namespace-zero", ("metadata", "namespace"), 0),
    ("namespace-list", ("metadata", "namespace"), ["a"]), ("namespace-empty-list", ("metadata", "namespace"), []),
    ("namespace-map", ("metadata", "namespace"), {}), ("namespace-bad", ("metadata", "namespace"), "Team_A"),
    ("namespace-empty", ("metadata", "namespace"), ""), ("namespace-none", ("metadata", "namespace"), None),
    ("labels-list", ("metadata", "labels"), []), ("labels-text", ("metadata", "labels"), "app=web"),
    ("labels-empty-text", ("metadata", "labels"), ""), ("label-int", ("metadata", "labels", "app"), 1),
    ("label-bool", ("metadata", "labels", "app"), True), ("label-none", ("metadata", "labels", "app"), None),
    ("label-list", ("metadata", "labels", "app"), ["web"]), ("label-bad", ("metadata", "labels", "app"), "-web"),
    ("label-long", ("metadata", "labels", "app"), "w" * 64), ("label-key-bad", ("metadata", "labels", "tier!"), "a"),
    ("label-key-int", ("metadata", "labels", 7), "a"), ("label-key-prefix", ("metadata", "labels", "/app"), "a"), ("label-newline", ("metadata", "labels", "app"), "a\nb"),
    ("metadata-list", ("metadata",), []), ("metadata-text", ("metadata",), "x"), ("metadata-none", ("metadata",), None),
]


@pytest.mark.parametrize(("path", "value"), [c[1:] for c in TOP_CULPRITS], ids=[c[0] for c in TOP_CULPRITS])
@pytest.mark.parametrize("plain", [True, False], ids=["plain", "exact"])
@pytest.mark.parametrize("given_fields", [False, True], ids=["read", "given"])
def test_objects_metadata_checked_once_per_window_as_the_walk_checks_it(path: tuple, value: object,
                                                                          plain: bool, given_fields: bool) -> None:
    pending = next(s for s in SEEDS if s["metadata"]["name"] == "web-1")
    objects = [copy.deepcopy(pending) for _ in range(40)]
    for i, obj in enumerate(objects):
        obj["metadata"]["name"] = f"web-{i}"
        obj["metadata"].setdefault("labels", {})["app"] = "web"
    parent: Any = objects[20]
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    expected = [_walk_issues(obj) for obj in objects]
    checker = validation.Validator(objects, plain=plain, fields=_fields(objects) if given_fields else None)
    assert [checker.issues(obj, at) for at, obj in enumerate(objects)] == expected
    flags = checker.flags()
    for at, obj in enumerate(objects):  # clean: no issue, and valid label keys and values
        if flags[at]:
            assert expected[at] == []
            label_map = (obj.get("metadata") or {}).get("labels") or {}
            assert all(labels.label_value_error(v) is None for v in label_map.values())
            assert all(labels.label_key_error(k) is None for k in label_map)
    assert sum(flags) >= 40 - validation.PART  # the others were spared the walk


# ------------------------------------------------------------------ documents of a YAML stream of JSON

GOOD_CHUNKS = [
    '{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}}\n',
    '{"apiVersion": "v1",\n "kind": "Namespace", "metadata": {"name": "b"}}\n',
    "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: c\n",
    "", "\n", "# a comment\n",
    "apiVersion: v1\nkind: Namespace\nmetadata: &m {name: e}\nspec: *m\n",
]
BAD_CHUNKS = [
    "apiVersion: v1\nkind: Namespace\nmetadata: {name: [d\n",  # bad YAML
    "apiVersion: v1\nkind: Namespace\nkind: Node\n",  # a repeated key
]
# at most one bad document: with two, which one is reported first is another matter (the YAML path
# checks the whole stream's syntax before it reads a document)
CHUNKS = st.tuples(st.lists(st.sampled_from(GOOD_CHUNKS), min_size=1, max_size=6),
                   st.sampled_from([None, *BAD_CHUNKS]), st.integers(0, 6)).map(
    lambda t: t[0] if t[1] is None else [*t[0][:t[2]], t[1], *t[0][t[2]:]])


def _read(text: str, how: str) -> tuple[str, object]:
    try:
        if how == "mixed":
            got = list(loader.parse_documents(text, "s.yaml"))  # JSON documents read as JSON
        else:
            got = list(loader._parse_yaml(text, "s.yaml"))
        return "ok", [(d.index, d.line, d.obj) for d in got if d.obj is not None]
    except InputError as e:
        return "error", (e.doc, e.line, e.detail)


@SETTINGS
@given(CHUNKS, st.booleans())
def test_stream_of_json_documents_numbers_documents_and_lines_as_the_file(chunks: list[str], lead: bool) -> None:
    # JSON is YAML: PyYAML reading the whole stream is the reference for document numbers and lines
    text = ("---\n" if lead else "") + "---\n".join(chunks)
    if not any(c.startswith("{") for c in chunks):
        text = '{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "z"}}\n---\n' + text
    assert _read(text, "mixed") == _read(text, "yaml")


def test_error_in_a_yaml_document_of_a_json_stream_names_the_files_document(tmp_path: Path) -> None:
    from .test_bad_input import simulate

    ns = '{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "%s"}}\n'
    text = (ns % "a") + "---\n" + (ns % "b") + "---\n---\n" + (ns % "c") + \
        "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: d\n  name: e\n"
    path = tmp_path / "stream.yaml"
    path.write_text(text)
    result = simulate(str(path))
    assert result.exit_code == 2
    assert f"{path}:12: document 5: mapping key \"name\" already defined at line 11" in result.stderr


# ------------------------------------------------------------------ a NUL in a path

@pytest.mark.parametrize("args", [
    ["simulate", "fixtures/demo.yaml", "--config", "conf\x00ig.yaml"],
    ["simulate", "snap\x00shot.yaml"],
    ["simulate", "fixtures/demo.yaml", "--expect", "exp\x00ect.yaml"],
    ["simulate", "fixtures/demo.yaml", "--scenario", "scen\x00ario.yaml"],
], ids=["config", "snapshot", "expect", "scenario"])
def test_nul_in_a_path_is_an_input_error(args: list[str]) -> None:
    from typer.testing import CliRunner

    from pysched.cli.main import app

    root = Path(__file__).resolve().parent.parent
    result = CliRunner().invoke(app, [a if a != "fixtures/demo.yaml" else str(root / a) for a in args])
    assert result.exit_code == 2, (result.output, result.exception)
    assert "Traceback" not in result.output + result.stderr
    assert "NUL" in result.stderr or "no such file" in result.stderr


def test_reader_refuses_a_nul_in_a_path() -> None:
    from pysched.snapshot import reader

    with pytest.raises(InputError, match="contains a NUL character"):
        reader.read_bytes("a\x00b")
    with pytest.raises(InputError, match="contains a NUL character"):
        loader.read_source("a\x00b")


def test_the_schema_table_is_read_as_the_standard_decoder_reads_it() -> None:
    """The table (read by orjson): the same types and kinds as ``json.loads`` of the file."""
    import json

    table = json.loads(validation.SCHEMA_FILE.read_text())
    types, kinds = validation._schema()
    assert types.raw == table["types"]  # type: ignore[attr-defined]
    assert kinds == table["kinds"]
    assert list(kinds) == list(table["kinds"])  # (in the file's order)


# pods of one template, some bound (their nodeName the one field their specs do not share), changed at one
# place: the loader's look-up of specs (PodParser.expect) says which pods repeat an earlier pod's spec, and the
# validator checks such a spec once (with the first pod's, or not at all when the first pod was found clean)
REPEATED = [
    ("clean", None, None, None, []),
    ("a-repeats-node-name", 300, ("spec", "nodeName"), 5, [300]),
    ("a-first-pods-name", 0, ("metadata", "name"), "Web-0", [0]),
    ("every-spec-a-typo", "all", ("spec", "containers", 0, "resources"), {"request": {"cpu": "1"}}, "all"),
    ("a-late-spec-of-its-own", 650, ("spec", "priority"), "high", [650]),
]


@pytest.mark.parametrize(("at", "path", "value", "culprits"), [c[1:] for c in REPEATED], ids=[c[0] for c in REPEATED])
def test_repeated_specs_are_checked_once_and_say_what_the_walk_says(
        at: object, path: tuple | None, value: object, culprits: object, monkeypatch: pytest.MonkeyPatch) -> None:
    from pysched.model.objects import PodParser

    web = next(s for s in SEEDS if s["metadata"]["name"] == "web-1")
    objects = [copy.deepcopy(web) for _ in range(2 * validation.WINDOW - 300)]
    for i, obj in enumerate(objects):
        obj["metadata"]["name"] = f"web-{i}"
        if i % 3:
            obj["spec"]["nodeName"] = f"node-{i}"
    for i, obj in enumerate(objects):
        if path is not None and (at == "all" or at == i):
            parent: Any = obj
            for key in path[:-1]:
                parent = parent[key]
            parent[path[-1]] = copy.deepcopy(value)
    same = PodParser().expect(objects, range(len(objects)))
    stripped: list[int] = []  # pods given to the batch check without their specs, per batch
    real = validation._window_clean

    def spy(groups: dict, *args: Any) -> bool:
        stripped.append(sum("spec" not in obj for obj in groups.get("V1Pod", [])))
        return real(groups, *args)

    monkeypatch.setattr(validation, "_window_clean", spy)
    checker = validation.Validator(objects, plain=True, fields=_fields(objects), same_spec=same)
    issues = [checker.issues(obj, i) for i, obj in enumerate(objects)]
    assert issues == [_walk_issues(obj) for obj in objects]
    assert [i for i, found in enumerate(issues) if found] == (list(range(len(objects))) if culprits == "all"
                                                              else culprits)
    if culprits == []:  # every spec but the first checked with it, or as that of a pod found clean
        assert sum(stripped) == len(objects) - 1
    assert sum(stripped) > 0


@pytest.mark.parametrize("plain", [True, False], ids=["plain", "exact"])
def test_lists_flattened_for_the_batch_check_keep_every_item(plain: bool) -> None:
    # the items of lists (of strings, of objects) are gathered with list.extend (``_flatten``): a culprit in
    # the last list of many is found, and the items keep their order
    assert validation._flatten([["a"], [], ["b", "c"], ["d"]]) == ["a", "b", "c", "d"]
    image = {"names": ["docker.io/library/nginx:1.27"], "sizeBytes": 1}
    status = {"images": [copy.deepcopy(image) for _ in range(50)]}
    assert validation._batch_clean({"V1NodeStatus": [copy.deepcopy(status) for _ in range(4)]}, plain)
    for bad in ({"names": ["a", 5], "sizeBytes": 1}, {"names": ["a"], "sizeByte": 1}, "image", None):
        statuses = [copy.deepcopy(status) for _ in range(4)]
        statuses[-1]["images"][-1] = bad
        expected = bad is None  # (a null item holds nothing to check)
        assert validation._batch_clean({"V1NodeStatus": statuses}, plain) is expected, bad


@pytest.mark.parametrize("stamp", ["2025-03-01T08:00:00Z", 5, None, ["x"], "absent"])
def test_creation_timestamps_read_by_the_loader_are_not_read_again(stamp: object,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # the loader reads every creationTimestamp (for timeutil.prime) and hands them over: when all are strings
    # the metadata's batch check leaves them out; else it checks them as ever, and finds what the walk finds
    web = next(s for s in SEEDS if s["metadata"]["name"] == "web-1")
    objects = [copy.deepcopy(web) for _ in range(40)]
    for i, obj in enumerate(objects):
        obj["metadata"]["name"] = f"web-{i}"
        obj["metadata"]["creationTimestamp"] = "2025-03-01T08:00:00Z"
    if stamp == "absent":
        del objects[17]["metadata"]["creationTimestamp"]
    else:
        objects[17]["metadata"]["creationTimestamp"] = stamp
    fields = _fields(objects)
    stamps = loader._prime_times(objects, fields[2])
    assert stamps == [o["metadata"].get("creationTimestamp") for o in objects]
    codes: list[str] = []
    real = validation._batch_clean

    def spy(groups: dict, plain: bool = False) -> bool:
        codes.extend(groups)
        return real(groups, plain)

    monkeypatch.setattr(validation, "_batch_clean", spy)
    checker = validation.Validator(objects, plain=True, fields=fields, stamps=stamps)
    assert [checker.issues(obj, at) for at, obj in enumerate(objects)] == [_walk_issues(obj) for obj in objects]
    # the whole window first (its metadata with their own code), then its parts when it held a culprit
    strings = type(stamp) is str and stamp != "absent"
    assert codes[:2] == ["V1Pod@top", validation.TOP_META_STAMPED if strings else validation.TOP_META]
    assert (len(codes) > 2) is (type(stamp) in (int, list))


@SETTINGS
@given(st.lists(st.none() | st.integers(0, 3) | st.lists(st.just("a"), max_size=2) | NAMES
                | st.text(alphabet="abz09-.\n", max_size=8), min_size=1, max_size=6))
def test_names_the_loader_read_are_judged_as_any_names(names: list[Any]) -> None:
    # names handed over by the loader are first taken as non-empty strings, without a pass over their types:
    # the verdict is the same as that of the names' own check, whatever they hold
    for rule in (validation.DNS1123_LABEL, validation.DNS1123_SUBDOMAIN, validation.DNS1035_LABEL):
        expected = all(n is None or n == "" or (type(n) is str and rule.pattern.fullmatch(n) is not None
                                                and len(n) <= rule.max_len) for n in names)
        assert validation._some_names_valid(rule, names) == expected, (rule.fmt, names)
        assert validation._given_names_valid(rule, names) == expected, (rule.fmt, names)


@pytest.mark.parametrize("value", [None, {}, [], "app", 5, ["app"], [["x"]], {"app": 5}, {"app": None}, {"bad key!": "v"},
                                   {"app": "-x"}, "absent"], ids=repr)
@pytest.mark.parametrize("plain", [True, False], ids=["plain", "exact"])
def test_label_maps_taken_as_they_are_are_judged_as_before(value: object, plain: bool) -> None:
    # a reader's label maps are first checked without a pass over their types (set.union and dict.values
    # refuse what is no mapping); anything else is judged as before: the walk's issues, and clean only for
    # objects whose label keys and values are all valid
    web = next(s for s in SEEDS if s["metadata"]["name"] == "web-1")
    objects = [copy.deepcopy(web) for _ in range(40)]
    for i, obj in enumerate(objects):
        obj["metadata"]["name"] = f"web-{i}"
        obj["metadata"]["labels"] = {"app": "web", "pod-template-hash": f"h{i}"}
    if value == "absent":
        del objects[17]["metadata"]["labels"]
    else:
        objects[17]["metadata"]["labels"] = copy.deepcopy(value)
    checker = validation.Validator(objects, plain=plain, fields=_fields(objects))
    assert [checker.issues(obj, at) for at, obj in enumerate(objects)] == [_walk_issues(obj) for obj in objects]
    for at, obj in enumerate(objects):
        if checker.clean(obj, at):
            label_map = obj["metadata"].get("labels") or {}
            assert type(label_map) is dict
            assert all(labels.label_key_error(k) is None and labels.label_value_error(v) is None
                       for k, v in label_map.items())
    assert checker.clean(objects[0], 0)
