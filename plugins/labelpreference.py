"""LabelPreference: keep pods off nodes that carry certain labels; prefer nodes by a numeric label.

Filter: a node carrying any label key of ``avoidLabels`` is rejected (UnschedulableAndUnresolvable:
evicting pods would not help). Score: the value of the node label ``scoreLabel``, read as a number and
scaled to 0..100 over the nodes being scored — the highest value gets 100 (``order: Descending``, the
default) or the lowest does (``order: Ascending``); nodes without the label or with a non-numeric value
score 0.

    pluginConfig:
    - name: LabelPreference
      args:
        avoidLabels: [example.com/maintenance]
        scoreLabel: example.com/generation
        order: Descending
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from pysched.errors import ConfigError
from pysched.framework.cycle_state import CycleState
from pysched.framework.interface import MAX_NODE_SCORE, FilterPlugin, Handle, PreScorePlugin, ScorePlugin
from pysched.framework.plugin_args import qualified_name_errors
from pysched.framework.status import Code, Status
from pysched.lazyclass import dataclass  # the methods compiled on first use, not at every run's load
from pysched.model.objects import Pod
from pysched.snapshot.nodeinfo import NodeInfo

NAME = "LabelPreference"
ORDERS = ("Descending", "Ascending")
_FIELDS = ("avoidLabels", "scoreLabel", "order")
_STATE_KEY = "PreScore" + NAME


@dataclass(frozen=True, slots=True)
class LabelPreferenceArgs:
    avoid_labels: tuple[str, ...] = ()
    score_label: str = ""
    order: str = "Descending"


def _label_key(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"must be a label key (a string), got {value!r}", field=where)
    problems = qualified_name_errors(value)
    if problems:
        raise ConfigError(f"{value!r} is not a valid label key: {problems[0]}", field=where)
    return value


def decode_args(raw: Mapping[str, Any] | None) -> LabelPreferenceArgs:
    """Typed args; ConfigError (with the field inside ``args``) for anything kube-scheduler would refuse."""
    if raw is None:
        raise ConfigError("LabelPreference needs arguments: set avoidLabels and/or scoreLabel in its pluginConfig")
    if not isinstance(raw, Mapping):
        raise ConfigError(f"args must be an object, got {type(raw).__name__}")
    for key in raw:
        if key not in _FIELDS:
            raise ConfigError(f"unknown field {key!r} (known: {', '.join(_FIELDS)})", field=str(key))
    avoid_raw = raw.get("avoidLabels") or []
    if not isinstance(avoid_raw, list):
        raise ConfigError("must be a list of label keys", field="avoidLabels")
    avoid = tuple(_label_key(v, f"avoidLabels[{i}]") for i, v in enumerate(avoid_raw))
    score_label = raw.get("scoreLabel") or ""
    if score_label:
        score_label = _label_key(score_label, "scoreLabel")
    order = raw.get("order", "Descending")
    if order not in ORDERS:
        raise ConfigError(f"must be one of {', '.join(ORDERS)}, got {order!r}", field="order")
    if not avoid and not score_label:
        raise ConfigError("set avoidLabels, scoreLabel or both: with neither the plugin does nothing")
    return LabelPreferenceArgs(avoid, score_label, order)


def label_number(labels: Mapping[str, str], key: str) -> float | None:
    text = labels.get(key)
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


class LabelPreference(FilterPlugin, PreScorePlugin, ScorePlugin):
    NAME = NAME

    def __init__(self, args: LabelPreferenceArgs) -> None:
        self.args = args

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status | None:
        labels = node.node.labels
        for key in self.args.avoid_labels:
            if key in labels:
                return Status.unresolvable(f"node(s) had the avoided label {key}")
        return None

    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status | None:
        if not self.args.score_label:
            return Status(Code.Skip)
        values = [v for v in (label_number(n.node.labels, self.args.score_label) for n in nodes) if v is not None]
        state.write(_STATE_KEY, (min(values), max(values)) if values else None)
        return None

    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> tuple[int, Status | None]:
        bounds = state.read(_STATE_KEY)
        value = label_number(node.node.labels, self.args.score_label)
        if bounds is None or value is None:
            return 0, None
        lo, hi = bounds
        if hi == lo:
            return MAX_NODE_SCORE, None
        share = (value - lo) / (hi - lo)
        if self.args.order == "Ascending":
            share = 1.0 - share
        return round(share * MAX_NODE_SCORE), None


PLUGIN = LabelPreference


def factory(args: LabelPreferenceArgs | None, handle: Handle) -> LabelPreference:
    return LabelPreference(args if args is not None else decode_args(None))
