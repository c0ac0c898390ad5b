"""NodeAffinity: PreFilter node sets and Skip rules, Filter matching, PreScore/Score/NormalizeScore."""

from __future__ import annotations

import pytest

from pysched.errors import ConfigError
from pysched.framework.cycle_state import CycleState
from pysched.framework.interface import NodeScore
from pysched.framework.plugin_args import NodeAffinityArgs
from pysched.framework.status import Code
from pysched.plugins import nodeaffinity
from pysched.plugins.nodeaffinity import ERR_REASON_CONFLICT, ERR_REASON_ENFORCED, ERR_REASON_POD
from pysched.snapshot.columns import columns_for
from tests.builders import cluster_state, make_node, make_pod, node_info, verdict_is_filter


def expr(key: str, op: str, *values: str) -> dict:
    e: dict = {"key": key, "operator": op}
    if values:
        e["values"] = list(values)
    return e


def term(*exprs: dict, fields: list[dict] | None = None) -> dict:
    t: dict = {}
    if exprs:
        t["matchExpressions"] = list(exprs)
    if fields:
        t["matchFields"] = fields
    return t


def name_in(*names: str) -> dict:
    return {"key": "metadata.name", "operator": "In", "values": list(names)}


def plugin(added: dict | None = None) -> nodeaffinity.NodeAffinity:
    return nodeaffinity.factory(None if added is None else NodeAffinityArgs(added), None)


# --------------------------------------------------------------------------- PreFilter

PREFILTER_CASES = [
    # id, pod, expected: "skip" | None (no restriction) | set of names | "conflict"
    ("no-affinity-no-selector-skips", make_pod("p"), "skip"),
    ("empty-node-selector-does-not-skip", make_pod("p").node_selector({}), None),
    ("node-selector-only", make_pod("p").node_selector({"a": "b"}), None),
    ("preferred-only-skips", make_pod("p").preferred(1, term(expr("a", "Exists"))), "skip"),
    ("no-terms", make_pod("p").required_terms(), None),
    ("label-term-no-restriction", make_pod("p").required_terms(term(expr("a", "Exists"))), None),
    ("match-fields-single-term", make_pod("p").required_terms(term(fields=[name_in("n1")])), {"n1"}),
    ("match-fields-union-over-terms",
     make_pod("p").required_terms(term(fields=[name_in("n1")]), term(fields=[name_in("n2", "n3")])),
     {"n1", "n2", "n3"}),
    ("match-fields-intersect-within-term",
     make_pod("p").required_terms(term(fields=[name_in("n1", "n2"), name_in("n2", "n3")])), {"n2"}),
    ("one-term-without-fields-lifts-restriction",
     make_pod("p").required_terms(term(fields=[name_in("n1")]), term(expr("a", "Exists"))), None),
    ("empty-term-lifts-restriction", make_pod("p").required_terms(term(fields=[name_in("n1")]), {}), None),
    ("not-in-fields-do-not-restrict",
     make_pod("p").required_terms(term(fields=[{"key": "metadata.name", "operator": "NotIn", "values": ["n1"]}])),
     None),
    ("empty-intersection-in-one-term-still-unites",
     make_pod("p").required_terms(term(fields=[name_in("n1"), name_in("n2")]), term(fields=[name_in("n3")])),
     {"n3"}),
    ("all-intersections-empty-conflict",
     make_pod("p").required_terms(term(fields=[name_in("n1"), name_in("n2")])), "conflict"),
    ("unknown-names-kept", make_pod("p").required_terms(term(fields=[name_in("ghost")])), {"ghost"}),
]


@pytest.mark.parametrize(("pod", "expected"), [c[1:] for c in PREFILTER_CASES], ids=[c[0] for c in PREFILTER_CASES])
def test_pre_filter(pod, expected) -> None:
    state = CycleState()
    res, st = plugin().pre_filter(state, pod.pod(), [])
    if expected == "skip":
        assert res is None and st is not None and st.code == Code.Skip
        return
    if expected == "conflict":
        assert res is None and st is not None
        assert st.code == Code.UnschedulableAndUnresolvable and st.reasons == [ERR_REASON_CONFLICT]
        return
    assert st is None
    if expected is None:
        assert res is None
    else:
        assert res is not None and res.node_names == expected


def test_pre_filter_added_affinity_prevents_skip() -> None:
    p = plugin({"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term(expr("z", "Exists"))]}})
    res, st = p.pre_filter(CycleState(), make_pod("p").pod(), [])
    assert res is None and st is None


# --------------------------------------------------------------------------- Filter

NODE = make_node("n1").labels({"zone": "a", "disk": "ssd", "cores": "8"})

FILTER_CASES = [
    # id, pod, matches
    ("selector-match", make_pod("p").node_selector({"zone": "a"}), True),
    ("selector-mismatch", make_pod("p").node_selector({"zone": "b"}), False),
    ("selector-missing-label", make_pod("p").node_selector({"gpu": "yes"}), False),
    ("empty-selector-matches", make_pod("p").node_selector({}), True),
    ("in", make_pod("p").required_terms(term(expr("zone", "In", "a", "b"))), True),
    ("in-missing-label", make_pod("p").required_terms(term(expr("gpu", "In", "a"))), False),
    ("not-in-missing-label-matches", make_pod("p").required_terms(term(expr("gpu", "NotIn", "a"))), True),
    ("not-in-value", make_pod("p").required_terms(term(expr("zone", "NotIn", "a"))), False),
    ("exists", make_pod("p").required_terms(term(expr("disk", "Exists"))), True),
    ("does-not-exist-missing-label", make_pod("p").required_terms(term(expr("gpu", "DoesNotExist"))), True),
    ("does-not-exist-present", make_pod("p").required_terms(term(expr("disk", "DoesNotExist"))), False),
    ("gt", make_pod("p").required_terms(term(expr("cores", "Gt", "4"))), True),
    ("gt-equal-fails", make_pod("p").required_terms(term(expr("cores", "Gt", "8"))), False),
    ("lt", make_pod("p").required_terms(term(expr("cores", "Lt", "16"))), True),
    ("gt-non-integer-label", make_pod("p").required_terms(term(expr("zone", "Gt", "1"))), False),
    ("gt-missing-label", make_pod("p").required_terms(term(expr("gpu", "Gt", "1"))), False),
    ("expressions-anded", make_pod("p").required_terms(term(expr("zone", "In", "a"), expr("disk", "In", "hdd"))),
     False),
    ("terms-ored", make_pod("p").required_terms(term(expr("zone", "In", "b")), term(expr("disk", "In", "ssd"))), True),
    ("no-terms-match-nothing", make_pod("p").required_terms(), False),
    ("only-empty-terms-match-nothing", make_pod("p").required_terms({}, {}), False),
    ("invalid-term-matches-nothing-others-evaluated",
     make_pod("p").required_terms(term(expr("cores", "Gt", "abc")), term(expr("zone", "In", "a"))), True),
    ("invalid-operator-term", make_pod("p").required_terms(term(expr("zone", "Bogus", "a"))), False),
    ("selector-and-affinity-both-needed",
     make_pod("p").node_selector({"zone": "a"}).required_terms(term(expr("disk", "In", "hdd"))), False),
    ("match-fields-name", make_pod("p").required_terms(term(fields=[name_in("n1")])), True),
    ("match-fields-other-name", make_pod("p").required_terms(term(fields=[name_in("n2")])), False),
    ("match-fields-not-in",
     make_pod("p").required_terms(term(fields=[{"key": "metadata.name", "operator": "NotIn", "values": ["n1"]}])),
     False),
    ("match-fields-and-expressions",
     make_pod("p").required_terms(term(expr("zone", "In", "b"), fields=[name_in("n1")])), False),
]


@pytest.mark.parametrize(("pod", "matches"), [c[1:] for c in FILTER_CASES], ids=[c[0] for c in FILTER_CASES])
def test_filter(pod, matches) -> None:
    p = plugin()
    state = CycleState()
    parsed = pod.pod()
    _, st = p.pre_filter(state, parsed, [])
    assert st is None or st.code != Code.Skip
    st = p.filter(state, parsed, node_info(NODE))
    if matches:
        assert st is None
    else:
        assert st is not None and st.code == Code.UnschedulableAndUnresolvable and st.reasons == [ERR_REASON_POD]


@pytest.mark.parametrize(("pod", "reason"), [
    (make_pod("p"), ERR_REASON_ENFORCED),
    (make_pod("p").node_selector({"zone": "b"}), ERR_REASON_ENFORCED),  # enforced check comes first
], ids=["enforced", "enforced-before-pod"])
def test_filter_added_affinity(pod, reason) -> None:
    p = plugin({"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term(expr("zone", "In", "x"))]}})
    st = p.filter(CycleState(), pod.pod(), node_info(NODE))
    assert st is not None and st.code == Code.UnschedulableAndUnresolvable and st.reasons == [reason]


def test_filter_added_affinity_passes_then_pod_checked() -> None:
    p = plugin({"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term(expr("zone", "In", "a"))]}})
    assert p.filter(CycleState(), make_pod("p").pod(), node_info(NODE)) is None
    st = p.filter(CycleState(), make_pod("p").node_selector({"zone": "b"}).pod(), node_info(NODE))
    assert st is not None and st.reasons == [ERR_REASON_POD]


def test_invalid_added_affinity_is_a_config_error() -> None:
    with pytest.raises(ConfigError):
        plugin({"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term(expr("a", "Gt", "x"))]}})


# --------------------------------------------------------------------------- Score

NODES = [
    make_node("n1").labels({"zone": "a", "disk": "ssd"}),
    make_node("n2").labels({"zone": "b", "disk": "ssd"}),
    make_node("n3").labels({"zone": "c"}),
]

SCORE_CASES = [
    # id, pod, added affinity, raw scores, normalized scores (None = PreScore skips)
    ("no-preferred-skips", make_pod("p"), None, None, None),
    ("empty-preferred-list-scores-zero", make_pod("p").preferred_empty(), None, [0, 0, 0], [0, 0, 0]),
    ("weights-summed", make_pod("p").preferred(10, term(expr("zone", "In", "a")))
     .preferred(5, term(expr("disk", "Exists"))), None, [15, 5, 0], [100, 33, 0]),
    ("weight-zero-and-empty-terms-dropped", make_pod("p").preferred(0, term(expr("zone", "In", "a")))
     .preferred(7, {}).preferred(3, term(expr("zone", "In", "c"))), None, [0, 0, 3], [0, 0, 100]),
    ("none-match", make_pod("p").preferred(4, term(expr("gpu", "Exists"))), None, [0, 0, 0], [0, 0, 0]),
    ("added-preferred-only", make_pod("p"),
     {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 5, "preference": term(expr("disk", "In", "ssd"))}]},
     [5, 5, 0], [100, 100, 0]),
    ("added-preferred-plus-pod", make_pod("p").preferred(2, term(expr("zone", "In", "b"))),
     {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 5, "preference": term(expr("disk", "In", "ssd"))}]},
     [5, 7, 0], [71, 100, 0]),
    ("added-preferred-all-dropped-still-no-skip", make_pod("p"),
     {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 0, "preference": term(expr("disk", "Exists"))}]},
     [0, 0, 0], [0, 0, 0]),
    ("match-fields-preference", make_pod("p").preferred(9, term(fields=[name_in("n3")])), None, [0, 0, 9],
     [0, 0, 100]),
]


@pytest.mark.parametrize(("pod", "added", "raw", "normalized"), [c[1:] for c in SCORE_CASES],
                         ids=[c[0] for c in SCORE_CASES])
def test_score(pod, added, raw, normalized) -> None:
    p = plugin(added)
    parsed = pod.pod()
    infos = [node_info(n) for n in NODES]
    state = CycleState()
    st = p.pre_score(state, parsed, infos)
    if raw is None:
        assert st is not None and st.code == Code.Skip
        return
    assert st is None
    scores = []
    for ni in infos:
        s, err = p.score(state, parsed, ni)
        assert err is None
        scores.append(NodeScore(ni.name, s))
    assert [s.score for s in scores] == raw
    assert p.HAS_NORMALIZE and p.normalize_score(state, parsed, scores) is None
    assert [s.score for s in scores] == normalized


def test_invalid_preferred_term_is_a_prescore_error() -> None:
    pod = make_pod("p").preferred(3, term(expr("a", "Gt", "x"))).pod()
    st = nodeaffinity.factory(None, None).pre_score(CycleState(), pod, [])
    assert st is not None and st.code == Code.Error


def test_invalid_preferred_term_with_weight_zero_is_dropped() -> None:
    pod = make_pod("p").preferred(0, term(expr("a", "Gt", "x"))).pod()
    assert nodeaffinity.factory(None, None).pre_score(CycleState(), pod, []) is None


_ZONED = [make_node("n0").label("zone", "a"), make_node("n1").label("zone", "b"),
          make_node("n2").label("zone", "a").label("disk", "ssd"), make_node("n3")]


@pytest.mark.parametrize(("pod", "kept"), [
    (make_pod("p").required_terms(term(expr("zone", "In", "a"))), True),
    (make_pod("p").required_terms(term(expr("zone", "NotIn", "a")), term(expr("disk", "Exists"))), True),
    (make_pod("p").required_terms(term(expr("zone", "In", "a"))).node_selector({"disk": "ssd"}), False),
], ids=["affinity", "two-terms", "with-node-selector"])
def test_batch_verdict_kept_per_required_affinity(pod, kept: bool) -> None:
    """Without a nodeSelector, batch_filter's verdict is kept per required affinity object and columns: a
    pod sharing another's gets the same verdict, which agrees with filter node by node (statuses too);
    with a nodeSelector (the pod's own) it is made again; other columns get their own."""
    p = plugin()
    first = pod.pod()
    twin = pod.pod(1)
    twin.node_affinity_required = first.node_affinity_required  # (as the pods parsed from one spec share it)
    cols = columns_for(cluster_state(_ZONED))
    v = p.batch_filter(CycleState(), first, cols)
    assert (p.batch_filter(CycleState(), twin, cols) is v) is kept
    want = verdict_is_filter(p, first, v, cols.infos)
    other = columns_for(cluster_state(_ZONED[:2]))
    w = p.batch_filter(CycleState(), twin, other)
    assert w is not v and w.ok.tolist() == [st is None for st in want[:2]]
