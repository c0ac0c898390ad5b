"""Fuzzing the what-if edits: scenario files (``parse_scenario``, including the steps other features
register, such as ``expect``) and the command-line edit flags (``parse_edit_flags`` and each ``Edit``'s
value parser), then the parsed edits applied to a small cluster. Arbitrary YAML-ish structures and strings
must give a parsed result or a ``PyschedError`` whose message says where (the flag, or the scenario file
and step); any other exception is a bug (issue 17).

Bounded: ``PYSCHED_FUZZ_EXAMPLES`` examples per test (default 150), no deadline; a few seconds in all.
"""

from __future__ import annotations

import atexit
import io
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

import pysched.report.expect  # noqa: F401  (registers the scenario step ``expect``)
from pysched.controllers import ExpansionOptions, expand_cluster
from pysched.controllers.edits import EDIT_KINDS, Edit, parse_edit_flags, parse_scenario
from pysched.errors import InputError, PyschedError
from pysched.snapshot.loader import load_snapshot

FUZZ = settings(max_examples=int(os.environ.get("PYSCHED_FUZZ_EXAMPLES", "150")), deadline=None,
                derandomize=not os.environ.get("PYSCHED_FUZZ_RANDOM"),
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
TMP = Path(tempfile.mkdtemp(prefix="pysched-fuzz-edits-"))
atexit.register(shutil.rmtree, TMP, ignore_errors=True)

# A node template that --add-node can read, a cluster the edits apply to.
(TMP / "node.yaml").write_text(yaml.safe_dump({
    "apiVersion": "v1", "kind": "Node", "metadata": {"name": "tmpl", "labels": {"pool": "x"}},
    "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}}))
(TMP / "cluster.yaml").write_text(yaml.safe_dump_all([
    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1", "labels": {"kubernetes.io/hostname": "node-1"}},
     "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}},
    {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
     "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
              "template": {"metadata": {"labels": {"app": "web"}},
                           "spec": {"containers": [{"name": "c", "image": "i"}]}}}},
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default", "labels": {"app": "db"}},
     "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "i"}]}, "status": {"phase": "Running"}},
]))
CLUSTER = load_snapshot([str(TMP / "cluster.yaml")])

# ---------------------------------------------------------------------------------------------- strategies
# Text close to what the parsers split on, plus anything.
PIECES = ["node-1", "node-2", "=", "/", ":", "-", "NoSchedule", "NoExecute", "PreferNoSchedule", "deployment",
          "deploy", "sts", "default", "web", "3", "0", "-1", "key", "value", "node.yaml", "missing.yaml", "\x00",
          "é", " ", "==", "::", "//"]
TEXT = st.one_of(st.lists(st.sampled_from(PIECES), max_size=6).map("".join), st.text(max_size=20))
SCALAR = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
                   st.floats(allow_nan=True), TEXT)
KEYS = st.one_of(st.sampled_from([*EDIT_KINDS, "expect", "replicas", "file", "count", "name", "landOn",
                                  "allScheduled", "maxPending", "noPreemption", "pods", "workload",
                                  "matchLabels", "matchExpressions", "key", "operator", "values"]), TEXT)
VALUE = st.recursive(SCALAR, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(KEYS, inner, max_size=4)), max_leaves=12)
STEP = st.one_of(st.dictionaries(KEYS, VALUE, min_size=1, max_size=3), VALUE)
DOCUMENT = st.one_of(st.lists(STEP, max_size=5), VALUE)
RAW = st.one_of(st.text(max_size=200),
                st.lists(st.sampled_from(["- ", "{", "}", "[", "]", ":", " ", "\n", "\t", "drain", "scale",
                                          "expect", "&a", "*a", "!!binary", "!!python/object", "---", "'", '"',
                                          "replicas: 3", "add-node: {file: node.yaml, count: 2}", "#", "~"]),
                         max_size=40).map("".join))


def _dump(obj: Any) -> str:
    try:
        return yaml.safe_dump(obj, allow_unicode=True)
    except (yaml.YAMLError, ValueError, OverflowError):
        return repr(obj)  # not representable as YAML: fuzz the repr as text instead


def _value_of(e: Edit) -> object:
    """The value parser the engine uses for this kind of edit."""
    parsers = {"cordon": e.node_value, "uncordon": e.node_value, "drain": e.node_value, "remove-node": e.node_value,
               "add-node": e.add_node_value, "scale": e.scale_value, "taint": e.taint_value,
               "untaint": e.untaint_value, "label": e.label_value}
    return parsers[e.kind]()


def _scenario(text: str, n: int) -> Path:
    path = TMP / f"s{n}.yaml"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    return path


COUNTER = iter(range(10**9))


def _no_stdin() -> Any:
    """``-`` is standard input for every file the edits read (``--add-node -``): an empty one here."""
    return mock.patch("sys.stdin", io.TextIOWrapper(io.BytesIO(b"")))


def _check_scenario(text: str) -> None:
    path = _scenario(text, next(COUNTER))
    try:
        scenario = parse_scenario(str(path))
    except PyschedError as e:
        assert str(path) in str(e), f"the error does not name the scenario file: {e}"
        return
    for edit in scenario.edits:
        assert edit.where.startswith(f"--scenario {path} step ")
        try:
            _value_of(edit)
        except InputError as e:
            assert edit.where in str(e), e
    try:
        with _no_stdin():
            expand_cluster(CLUSTER, scenario.edits, ExpansionOptions(now="2026-01-01T00:00:00Z"))
    except PyschedError as e:
        assert "step" in str(e) or str(path) in str(e), e


# ---------------------------------------------------------------------------------------------- targets
@FUZZ
@given(DOCUMENT)
def test_scenario_structures_parse_or_fail_cleanly(doc: Any) -> None:
    _check_scenario(_dump(doc))


@FUZZ
@given(RAW)
def test_scenario_text_parses_or_fails_cleanly(text: str) -> None:
    _check_scenario(text)


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(EDIT_KINDS), TEXT), max_size=4))
def test_edit_flags_parse_or_fail_naming_the_flag(flags: list[tuple[str, str]]) -> None:
    edits = parse_edit_flags(flags)
    assert [(e.kind, e.value) for e in edits] == flags
    for e in edits:
        try:
            _value_of(e)
        except InputError as err:
            assert f"--{e.kind} " in str(err), err
    try:
        with _no_stdin():
            expand_cluster(CLUSTER, edits, ExpansionOptions(now="2026-01-01T00:00:00Z"))
    except PyschedError as err:
        assert any(f"--{e.kind} " in str(err) for e in edits), err


@pytest.mark.parametrize("text", ["- {drain: node-1}\n- {scale: deployment/default/web, replicas: 3}\n"
                                  "- {label: node-1=disk=ssd}\n- {add-node: {file: node.yaml, count: 2}}\n"])
def test_the_valid_seed_parses_and_applies(text: str) -> None:
    path = _scenario(text, next(COUNTER))
    scenario = parse_scenario(str(path))
    assert [e.kind for e in scenario.edits] == ["drain", "scale", "label", "add-node"]
    cluster = expand_cluster(CLUSTER, scenario.edits, ExpansionOptions(now="2026-01-01T00:00:00Z"))
    assert len(cluster.nodes) == 3


# ---------------------------------------------------------------------------------------------- what the fuzzing found
@pytest.mark.parametrize(("kind", "value", "message"), [
    # a NUL byte in a file name (a scenario can write "\0") escaped as ValueError from os.open
    ("add-node", "node.yaml\x00=2", "FILE must not contain a NUL character"),
    # str.isdigit() takes "²", which int() refuses: ValueError
    ("add-node", "node.yaml=²", "expected FILE[=COUNT] with COUNT >= 1"),
    # other scripts' digits were read as numbers: ARABIC-INDIC ONE added one node, ONE TWO scaled to 12
    ("add-node", "node.yaml=\u0661", "expected FILE[=COUNT] with COUNT >= 1"),
    ("scale", "deployment/web=\u0661\u0662", "expected KIND/[NAMESPACE/]NAME=N"),
    # counts that would run for hours instead of failing
    ("add-node", "node.yaml=100000000", "is more than 1,000,000 nodes"),
    ("scale", "deployment/web=1000000000000", "is more than 1,000,000"),
    # keys and values the API server refuses were applied silently
    ("label", "node-1=bad key=v", "label key 'bad key'"),
    ("label", "node-1=k=two words", "label value 'two words'"),
    ("label", "node-1=a/b/c-", "label key 'a/b/c'"),
    ("taint", "node-1=k=v!:NoSchedule", "taint value 'v!'"),
    ("untaint", "node-1=k k", "taint key 'k k'"),
], ids=["nul", "superscript", "arabic-count", "arabic-replicas", "huge-count", "huge-replicas", "label-key",
        "label-value", "label-removal-key", "taint-value", "untaint-key"])
def test_bad_edit_values_are_input_errors(kind: str, value: str, message: str) -> None:
    [edit] = parse_edit_flags([(kind, value)])
    with pytest.raises(InputError) as info:
        _value_of(edit)
    assert message in str(info.value) and str(info.value).startswith(f"--{kind} ")


def test_scenario_replicas_must_not_be_negative() -> None:
    path = _scenario("- {scale: deployment/web, replicas: -3}\n", next(COUNTER))
    with pytest.raises(InputError, match=r"step 1: replicas: expected an integer >= 0, got -3"):
        parse_scenario(str(path))


def test_a_nul_in_a_scenario_add_node_is_an_input_error() -> None:
    path = _scenario('- {add-node: {file: "node.yaml\\0", count: 2}}\n', next(COUNTER))
    [edit] = parse_scenario(str(path)).edits
    with pytest.raises(InputError, match="FILE must not contain a NUL character"):
        expand_cluster(CLUSTER, [edit], ExpansionOptions(now="2026-01-01T00:00:00Z"))
