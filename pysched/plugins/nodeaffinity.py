"""NodeAffinity: nodeSelector and required node affinity filter; preferred node affinity scores.

PreFilter narrows the candidate nodes when every required term names nodes through
``matchFields: metadata.name In``. The optional ``addedAffinity`` argument is enforced on every pod.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from pysched.errors import ConfigError
from pysched.framework.batch import BatchVerdict, selector_sig, shape_verdict, template_statuses
from pysched.framework.cycle_state import CycleState
from pysched.framework.interface import (
    MAX_NODE_SCORE,
    FilterPlugin,
    Handle,
    NodeScore,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ScorePlugin,
)
from pysched.framework.status import PRE_FILTER_SKIP, PRE_SCORE_SKIP, Status
from pysched.framework.whatif import NODE_AFFINITY, Change, WhatIfContext, WhatIfPlugin, requirement_text
from pysched.model.labels import NodeSelector, NodeSelectorTerm, Requirement
from pysched.model.objects import Pod
from pysched.plugins.helper import (
    decode_plugin_args,
    default_normalize_array,
    default_normalize_score,
    default_normalize_values,
    pod_matches_node_selector_and_affinity,
)
from pysched.plugins.topology_arrays import topology_arrays
from pysched.snapshot.columns import NodeColumns
from pysched.snapshot.nodeinfo import NodeInfo

NAME = "NodeAffinity"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME

ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"
OBJECT_NAME_FIELD = "metadata.name"


def decode_args(raw: Any) -> Any:
    return decode_plugin_args(NAME, raw)


# --------------------------------------------------------------------------- term helpers

PreferredTerms = list[tuple[int, NodeSelectorTerm]]


def parse_preferred_terms(terms: list[tuple[int, NodeSelectorTerm | None]]) -> tuple[PreferredTerms, str | None]:
    """``NewPreferredSchedulingTerms``: drop weight-0 and empty terms; an invalid term is an error."""
    out: PreferredTerms = []
    errors = []
    for i, (weight, term) in enumerate(terms):
        if weight == 0 or term is None:
            continue
        if not term.valid:
            errors.append(f"[{i}].preference: invalid node selector term")
            continue
        out.append((weight, term))
    if errors:
        return [], ", ".join(errors)
    return out, None


def preferred_score(terms: PreferredTerms, node: NodeInfo) -> int:
    labels = node.node.labels
    score = 0
    for weight, term in terms:
        if term.matches(labels, node.name):
            score += weight
    return score


def _raw_required_terms(pod: Pod) -> list:
    """The pod's raw ``nodeSelectorTerms`` (empty terms included, as upstream's PreFilter sees them)."""
    spec: Any = pod.raw.get("spec") if isinstance(pod.raw, Mapping) else None
    try:
        terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    except (KeyError, TypeError):
        return []
    return terms if isinstance(terms, list) else []


def required_node_names(pod: Pod) -> set[str] | None:
    """Node names allowed by ``matchFields metadata.name In`` in every required term, or None (no limit).

    Within a term the name sets are intersected; across terms they are united. A term without such a
    field leaves the nodes unrestricted.
    """
    terms = _raw_required_terms(pod)
    if not terms:
        return None
    union: set[str] = set()
    for t in terms:
        term_names: set[str] | None = None
        fields = t.get("matchFields") if isinstance(t, Mapping) else None
        for r in fields if isinstance(fields, list) else []:
            if not isinstance(r, Mapping):
                continue
            if r.get("key") == OBJECT_NAME_FIELD and r.get("operator") == "In":
                values = {str(v) for v in (r.get("values") or [])}
                term_names = values if term_names is None else term_names & values
        if term_names is None:
            return None
        union |= term_names
    return union


# --------------------------------------------------------------------------- plugin

class NodeAffinity(PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin, WhatIfPlugin):
    NAME = NAME
    HAS_NORMALIZE = True

    def __init__(self, args: Any = None) -> None:
        if args is None:
            args = decode_args(None)
        self.added_node_selector: NodeSelector | None = None
        # id of a pod's required affinity (kept alive here) -> (it, the columns, batch_filter's verdict), for
        # pods without a nodeSelector (see batch_filter)
        self._verdicts: dict[int, tuple[NodeSelector, NodeColumns, BatchVerdict]] = {}
        self.added_pref_terms: PreferredTerms | None = None
        added = getattr(args, "added_affinity", None)
        if added:
            if not isinstance(added, Mapping):
                raise ConfigError("expected an object", field=f"{NAME}.addedAffinity")
            req = added.get("requiredDuringSchedulingIgnoredDuringExecution")
            if req is not None:
                ns = NodeSelector.parse(req)
                if any(not t.valid for t in ns.terms):
                    raise ConfigError("parsing addedAffinity.requiredDuringSchedulingIgnoredDuringExecution: "
                                      "invalid node selector term", field=f"{NAME}.addedAffinity")
                self.added_node_selector = ns
            pref = added.get("preferredDuringSchedulingIgnoredDuringExecution")
            if pref:
                parsed = []
                for p in pref:
                    p = p if isinstance(p, Mapping) else {}
                    parsed.append((int(p.get("weight") or 0), NodeSelectorTerm.parse(p.get("preference") or {})))
                terms, err = parse_preferred_terms(parsed)
                if err:
                    raise ConfigError(f"parsing addedAffinity.preferredDuringSchedulingIgnoredDuringExecution: {err}",
                                      field=f"{NAME}.addedAffinity")
                self.added_pref_terms = terms

    # ------------------------------------------------------------------ filter
    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        no_node_affinity = pod.node_affinity_required is None
        if no_node_affinity and self.added_node_selector is None and pod.node_selector is None:
            return None, PRE_FILTER_SKIP
        state.write(PRE_FILTER_STATE_KEY, True)
        if no_node_affinity:
            return None, None
        names = required_node_names(pod)
        if names is None:
            return None, None
        if not names:
            return None, Status.unresolvable(ERR_REASON_CONFLICT)
        return PreFilterResult(names), None

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status | None:
        labels = node.node.labels
        if self.added_node_selector is not None and not self.added_node_selector.matches(labels, node.name):
            return Status.unresolvable(ERR_REASON_ENFORCED)
        if not pod_matches_node_selector_and_affinity(pod, labels, node.name):
            return Status.unresolvable(ERR_REASON_POD)
        return None

    def batch_filter(self, state: CycleState, pod: Pod, cols: NodeColumns) -> BatchVerdict | None:
        if self.added_node_selector is None:
            req = pod.node_affinity_required
            if not pod.node_selector and req is not None:
                # the verdict reads nothing of the pod but its required affinity, which the pods parsed from
                # one spec share, and the columns' nodes never change: kept per (affinity, columns)
                hit = self._verdicts.get(id(req))
                if hit is not None and hit[0] is req and hit[1] is cols:
                    return hit[2]
            # nodeSelector and required affinity as arrays: each requirement once per distinct label value
            ok = topology_arrays(cols).required_affinity_mask(pod)
            cache: dict[int, Status] = {}  # (one shared Status, built at the first ask)
            verdict = BatchVerdict(ok, lambda rows: template_statuses(
                np.zeros(len(rows), dtype=np.int64), lambda _: Status.unresolvable(ERR_REASON_POD), cache))
            if not pod.node_selector and req is not None:
                if len(self._verdicts) > 256:
                    self._verdicts.clear()
                self._verdicts[id(req)] = (req, cols, verdict)
            return verdict
        # the verdict reads the node's labels and name, the pod's selector and required affinity
        sig = repr((sorted((pod.node_selector or {}).items()), pod.node_selector is None,
                    selector_sig(pod.node_affinity_required)))
        return shape_verdict(self, state, pod, cols, sig)

    # ------------------------------------------------------------------ score
    def _pod_preferred(self, pod: Pod) -> tuple[PreferredTerms | None, str | None]:
        if pod.node_affinity_preferred is None:
            return None, None
        return parse_preferred_terms(pod.node_affinity_preferred)

    PRE_SCORE_ROWS = True  # (a RowNodes is welcome: pre_score reads no node)

    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status | None:
        if pod.node_affinity_preferred is None and self.added_pref_terms is None:
            return PRE_SCORE_SKIP  # (most pods: _pod_preferred would find no terms)
        terms, err = self._pod_preferred(pod)
        if err:
            return Status.as_error(err)
        if terms is None and self.added_pref_terms is None:
            return PRE_SCORE_SKIP
        state.write(PRE_SCORE_STATE_KEY, terms)
        return None

    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> tuple[int, Status | None]:
        count = 0
        if self.added_pref_terms is not None:
            count += preferred_score(self.added_pref_terms, node)
        if state.has(PRE_SCORE_STATE_KEY):
            terms = state.read(PRE_SCORE_STATE_KEY)
        else:
            terms, err = self._pod_preferred(pod)
            if err:
                return 0, Status.as_error(err)
        if terms is not None:
            count += preferred_score(terms, node)
        return count, None

    def batch_score(self, state: CycleState, pod: Pod, cols: NodeColumns, rows: np.ndarray) -> np.ndarray | None:
        """Preferred terms read only the node's labels and name: each node is scored once per set of
        terms (on demand) and looked up by row."""
        if not state.has(PRE_SCORE_STATE_KEY):
            return None
        terms = state.read(PRE_SCORE_STATE_KEY)
        sig = tuple((w, selector_sig(_OneTerm(t))) for w, t in terms) if terms is not None else None
        key = (id(self), "score", sig)
        scores = cols.masks.get(key)
        if scores is None:
            scores = cols.masks[key] = np.full(cols.n, -1, dtype=np.int64)  # -1: not scored yet
        todo = rows[scores[rows] < 0]
        if len(todo):
            infos = cols.infos
            scores[todo] = [self.score(state, pod, infos[i])[0] for i in todo.tolist()]
        return scores[rows]

    def batch_normalize(self, state: CycleState, pod: Pod, scores: np.ndarray) -> np.ndarray:
        return default_normalize_array(MAX_NODE_SCORE, False, scores)

    def normalize_values(self, state: CycleState, pod: Pod, values: list[int]) -> list[int]:
        return default_normalize_values(MAX_NODE_SCORE, False, values)

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        default_normalize_score(MAX_NODE_SCORE, False, scores)
        return None

    # ------------------------------------------------------------------ what-if
    def what_would_fit(self, state: CycleState, pod: Pod, node: NodeInfo, status: Status,
                       ctx: WhatIfContext | None = None) -> Change:
        """The fewest node labels to set or remove: the nodeSelector's, then the cheapest term of the pod's
        required affinity and of the scheduler's ``addedAffinity``; none when no term can match."""
        nodes = ctx.nodes if ctx is not None else [node]
        change = Change(NAME, NODE_AFFINITY, status.message())
        labels = dict(node.node.labels)
        set_labels: dict[str, str] = {}
        remove: set[str] = set()
        details: dict[str, Any] = {}
        mismatched: list[dict[str, Any]] = [{"key": k, "want": v, "have": labels.get(k)}
                                            for k, v in sorted((pod.node_selector or {}).items()) if labels.get(k) != v]
        if mismatched:
            details["node_selector"] = mismatched
            for m in mismatched:
                set_labels[m["key"]] = m["want"]
        after_selector = {**labels, **set_labels}
        unfixable = False
        for which, selector in (("pod", pod.node_affinity_required), ("scheduler", self.added_node_selector)):
            if selector is None or selector.matches(after_selector, node.name):
                continue
            best = _cheapest_term(selector, after_selector, node.name, dict(pod.node_selector or {}), nodes)
            if best is None:
                details[f"{which}_affinity"] = {"terms": len(selector.terms), "fixable": False}
                unfixable = True
                continue
            index, unmet, sets, removes = best
            details[f"{which}_affinity"] = {"terms": len(selector.terms), "term": index,
                                            "unmet": [requirement_text(r) for r in unmet], "fixable": True}
            set_labels.update(sets)
            remove |= removes
            for k in removes:
                after_selector.pop(k, None)
            after_selector.update(sets)
        matching = ctx.passing(NAME) if ctx is not None else []
        details["matching_nodes"] = len(matching)
        details["matching_examples"] = matching[:5]
        change.details = details
        if not unfixable:
            change.set_labels = set_labels
            change.remove_labels = sorted(remove - set(set_labels))
        return change


def _cheapest_term(selector: NodeSelector, labels: dict[str, str], node_name: str, pinned: dict[str, str],
                   nodes: Sequence[NodeInfo]) -> tuple[int, list[Requirement], dict[str, str], set[str]] | None:
    """The term of ``selector`` that the fewest label changes make ``labels`` match, or None; the
    ``pinned`` labels (the nodeSelector's) must keep their values."""
    best = None
    for i, term in enumerate(selector.terms):
        if not term.valid:
            continue
        if term.fields and not all(r.matches({OBJECT_NAME_FIELD: node_name}) for r in term.fields):
            continue  # the term names other nodes: no label makes this one match it
        unmet = [r for r in term.expressions if not r.matches(labels)]
        sets: dict[str, str] = {}
        removes: set[str] = set()
        possible = True
        for k in dict.fromkeys(r.key for r in unmet):
            reqs = [r for r in term.expressions if r.key == k]
            if k in pinned:
                reqs.append(Requirement(k, "In", frozenset((pinned[k],))))
            found, value = _satisfying_value(k, reqs, nodes)
            if not found:
                possible = False  # e.g. cpu-gen > 3 and cpu-gen < 2: no value meets both
                break
            if value is None:
                removes.add(k)
            else:
                sets[k] = value
        if not possible:
            continue
        cost = len(sets) + len(removes)
        if best is None or cost < best[0]:
            best = (cost, i, unmet, sets, removes)
    if best is None:
        return None
    return best[1], best[2], best[3], best[4]


def _satisfying_value(key: str, reqs: list[Requirement], nodes: Sequence[NodeInfo]) -> tuple[bool, str | None]:
    """A value of label ``key`` that meets every requirement on it: (True, None) when the label's absence
    does, (False, None) when nothing does. Tried: the requirements' own values, then the values nodes carry
    (most common first), then ``true``."""
    if all(r.matches({}) for r in reqs):
        return True, None
    candidates: list[str] = []
    for r in reqs:
        values = sorted(r.values)
        if r.op == "In":
            candidates += values
        elif r.op in ("Gt", "Lt") and values:
            try:
                bound = int(values[0])
            except ValueError:
                continue
            candidates.append(str(bound + 1 if r.op == "Gt" else bound - 1))
    seen = Counter(ni.node.labels[key] for ni in nodes if key in ni.node.labels)
    candidates += [v for v, _ in sorted(seen.items(), key=lambda kv: (-kv[1], kv[0]))]
    candidates.append("true")
    for v in candidates:
        if all(r.matches({key: v}) for r in reqs):
            return True, v
    return False, None


class _OneTerm:
    """One preferred term seen as a selector (for its signature)."""

    __slots__ = ("terms",)

    def __init__(self, term: NodeSelectorTerm) -> None:
        self.terms = (term,)


PLUGIN = NodeAffinity


def factory(args: Any, handle: Handle) -> NodeAffinity:
    return NodeAffinity(args)
