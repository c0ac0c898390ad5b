"""What-if edits: command-line flags and ``--scenario`` files, parsed into ``Edit`` steps.

A scenario file is a YAML list of one-key mappings ``{FLAG: VALUE}`` (VALUE as the flag takes it), or the
structured forms ``{add-node: {file: F, count: N}}`` and ``{scale: KIND/NS/NAME, replicas: N}``. Other
step keys may be registered (``register_step``) by features that extend the file format; their steps are
kept, in order, in ``Scenario.extras``.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping
from dataclasses import field
from pathlib import Path

from pysched.apimachinery import label_value_errors, qualified_name_errors
from pysched.errors import InputError
from pysched.lazyclass import dataclass

EDIT_KINDS = ("cordon", "uncordon", "drain", "remove-node", "add-node", "scale", "taint", "untaint", "label")
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
MAX_COUNT = 1_000_000  # nodes one add-node adds, replicas of a scale: more would run for hours, not fail
SCALE_KINDS = {"deployment": "Deployment", "deploy": "Deployment", "deployments": "Deployment",
               "replicaset": "ReplicaSet", "rs": "ReplicaSet", "replicasets": "ReplicaSet",
               "replicationcontroller": "ReplicationController", "rc": "ReplicationController",
               "replicationcontrollers": "ReplicationController",
               "statefulset": "StatefulSet", "sts": "StatefulSet", "statefulsets": "StatefulSet",
               "job": "Job", "jobs": "Job"}


@dataclass(frozen=True, slots=True)
class Edit:
    """One edit. ``where`` names it in errors (``--drain`` or ``scenario s.yaml step 3``); ``base`` is the
    folder add-node files are relative to."""

    kind: str
    value: str
    where: str
    base: str = ""

    @property
    def flag(self) -> str:
        return f"--{self.kind}"

    # ---------------------------------------------------------------- parsed values (raise InputError)
    def node_value(self) -> str:
        if not self.value or "=" in self.value:
            raise self.error(f"expected a node name, got {self.value!r}")
        return self.value

    def add_node_value(self) -> tuple[str, int]:
        path, sep, count = self.value.rpartition("=")
        if not sep:
            path, count = self.value, "1"
        if not path or not _is_number(count) or int(count) < 1:
            raise self.error(f"expected FILE[=COUNT] with COUNT >= 1, got {self.value!r}")
        if int(count) > MAX_COUNT:
            raise self.error(f"COUNT {count} is more than {MAX_COUNT:,} nodes")
        if "\x00" in path:  # no file name holds one (a scenario file can write it: "\0")
            raise self.error(f"FILE must not contain a NUL character, got {self.value!r}")
        p = Path(path)
        if self.base and not p.is_absolute():
            p = Path(self.base) / p
        return str(p), int(count)

    def scale_value(self) -> tuple[str, str, str, int]:
        """(Kind, namespace, name, replicas)."""
        m = re.fullmatch(r"([A-Za-z]+)/(?:([^/=]+)/)?([^/=]+)=([0-9]+)", self.value)
        if not m:
            raise self.error(f"expected KIND/[NAMESPACE/]NAME=N, got {self.value!r}")
        if int(m.group(4)) > MAX_COUNT:
            raise self.error(f"replicas {m.group(4)} is more than {MAX_COUNT:,}")
        kind = SCALE_KINDS.get(m.group(1).lower())
        if kind is None:
            raise self.error(f"cannot scale kind {m.group(1)!r}: expected one of deployment, replicaset, "
                             f"replicationcontroller, statefulset, job (or deploy, rs, rc, sts)")
        return kind, m.group(2) or "default", m.group(3), int(m.group(4))

    def taint_value(self) -> tuple[str, str, str, str]:
        """(node, key, value, effect)."""
        node, sep, rest = self.value.partition("=")
        kv, sep2, effect = rest.rpartition(":")
        key, _, value = kv.partition("=")
        if not node or not sep or not sep2 or not key or effect not in TAINT_EFFECTS:
            raise self.error(f"expected NODE=KEY[=VALUE]:EFFECT with EFFECT one of {', '.join(TAINT_EFFECTS)}, "
                             f"got {self.value!r}")
        self._check_key_value("taint", key, value)
        return node, key, value, effect

    def untaint_value(self) -> tuple[str, str, str]:
        """(node, key, effect or '')."""
        node, sep, rest = self.value.partition("=")
        key, _, effect = rest.partition(":")
        if not node or not sep or not key or (effect and effect not in TAINT_EFFECTS):
            raise self.error(f"expected NODE=KEY[:EFFECT], got {self.value!r}")
        self._check_key_value("taint", key, "")
        return node, key, effect

    def label_value(self) -> tuple[str, str, str | None]:
        """(node, key, value; None removes the label)."""
        node, sep, rest = self.value.partition("=")
        if not node or not sep or not rest:
            raise self.error(f"expected NODE=KEY=VALUE or NODE=KEY-, got {self.value!r}")
        if "=" in rest:
            key, _, value = rest.partition("=")
            if key:
                self._check_key_value("label", key, value)
                return node, key, value
        elif rest.endswith("-") and len(rest) > 1:
            self._check_key_value("label", rest[:-1], "")
            return node, rest[:-1], None
        raise self.error(f"expected NODE=KEY=VALUE or NODE=KEY-, got {self.value!r}")

    def _check_key_value(self, what: str, key: str, value: str) -> None:
        """Keys and values as the API server checks labels and taints (``kubectl label`` refuses others)."""
        for part, errors in ((f"{what} key {key!r}", qualified_name_errors(key)),
                             (f"{what} value {value!r}", label_value_errors(value))):
            if errors:
                raise self.error(f"{part}: {'; '.join(errors)}")

    def error(self, message: str, names: list[str] | None = None, wanted: str = "") -> InputError:
        if names is not None:
            near = difflib.get_close_matches(wanted, names, n=3, cutoff=0.5)
            if near:
                message += f" (closest: {', '.join(near)})"
        return InputError(f"{self.where}: {message}")


def _is_number(text: str) -> bool:
    """Digits 0-9 only (``str.isdigit`` also takes ``²`` and other scripts' digits)."""
    return text.isascii() and text.isdigit()


def parse_edit_flags(ordered: list[tuple[str, str]]) -> list[Edit]:
    """Edits from (flag kind, value) pairs in command-line order; ``scenario`` pairs contribute their file's
    steps at their place."""
    out: list[Edit] = []
    for kind, value in ordered:
        if kind == "scenario":
            out.extend(parse_scenario(value).edits)
        else:
            out.append(Edit(kind, value, f"--{kind} {value}"))
    return out


StepParser = Callable[[object, str, str], object]
_EXTRA_STEPS: dict[str, StepParser] = {}


def register_step(key: str, parser: StepParser) -> None:
    """Let another feature give scenario steps ``{key: ...}`` a meaning; ``parser(value, where, base)``
    returns what is kept in ``Scenario.extras``."""
    if key in EDIT_KINDS or key in _EXTRA_STEPS:
        raise ValueError(f"scenario step {key!r} is already registered")
    _EXTRA_STEPS[key] = parser


@dataclass
class Scenario:
    path: str
    edits: list[Edit] = field(default_factory=list)
    extras: list[tuple[int, str, object]] = field(default_factory=list)  # (step number, key, parsed)


def parse_scenario(path: str) -> Scenario:
    from pysched.snapshot.loader import parse_documents, read_source  # reading is bounded there
    docs = [d.obj for d in parse_documents(read_source(path, 16 << 20), path) if d.obj is not None]
    if len(docs) != 1 or not isinstance(docs[0], list):
        raise InputError("a scenario is one YAML list of steps such as '- {drain: node-7}'", file=path)
    base = str(Path(path).parent)
    scenario = Scenario(path)
    for i, step in enumerate(docs[0], 1):
        where = f"--scenario {path} step {i}"
        if not isinstance(step, Mapping) or not step:
            raise InputError(f"{where}: expected a mapping such as {{drain: node-7}}, got {step!r}")
        keys = [str(k) for k in step]
        kind = keys[0]
        if kind in _EXTRA_STEPS and len(keys) == 1:
            scenario.extras.append((i, kind, _EXTRA_STEPS[kind](step[kind], where, base)))
            continue
        if kind not in EDIT_KINDS:
            near = difflib.get_close_matches(kind, [*EDIT_KINDS, *_EXTRA_STEPS], n=3)
            hint = f" (closest: {', '.join(near)})" if near else ""
            raise InputError(f"{where}: unknown step {kind!r}{hint}; steps: {', '.join(EDIT_KINDS)}")
        scenario.edits.append(Edit(kind, _step_value(kind, step, where), where, base))
    return scenario


def _step_value(kind: str, step: Mapping, where: str) -> str:
    value = step[kind]
    extra = [str(k) for k in step if k != kind]
    if kind == "scale" and extra == ["replicas"]:
        n = step["replicas"]
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise InputError(f"{where}: replicas: expected an integer >= 0, got {n!r}")
        if not isinstance(value, str):
            raise InputError(f"{where}: scale: expected KIND/[NAMESPACE/]NAME, got {value!r}")
        return f"{value}={n}"
    if extra:
        raise InputError(f"{where}: unexpected key(s) {', '.join(extra)} in a {kind} step")
    if kind == "add-node" and isinstance(value, Mapping):
        unknown = set(map(str, value)) - {"file", "count"}
        f, n = value.get("file"), value.get("count", 1)
        if unknown or not isinstance(f, str) or isinstance(n, bool) or not isinstance(n, int):
            raise InputError(f"{where}: expected {{file: FILE, count: N}}, got {dict(value)!r}")
        return f"{f}={n}"
    if not isinstance(value, str):
        raise InputError(f"{where}: expected a string value for {kind}, got {value!r}")
    return value
