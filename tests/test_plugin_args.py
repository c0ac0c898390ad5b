"""Plugin args: strict decoding, v1 defaulting and kube-scheduler's validation messages."""

from __future__ import annotations

from typing import Any

import pytest

from pysched.errors import ConfigError
from pysched.framework import plugin_args as pa
from pysched.framework.plugin_args import (
    DECODERS,
    ConfigErrors,
    DefaultPreemptionArgs,
    DynamicResourcesArgs,
    InterPodAffinityArgs,
    NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    PodTopologySpreadArgs,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
    VolumeBindingArgs,
)

P = "profiles[0].pluginConfig[0].args"
CPU_MEM = [ResourceSpec("cpu", 1), ResourceSpec("memory", 1)]


def messages(err: ConfigError) -> list[str]:
    return [str(e) for e in pa.flatten(err)]


# --------------------------------------------------------------------------------------------------
# Defaults

DEFAULTS: list[tuple[str, Any]] = [
    ("NodeResourcesFit", NodeResourcesFitArgs([], [], ScoringStrategy("LeastAllocated", CPU_MEM, []))),
    ("NodeResourcesBalancedAllocation", NodeResourcesBalancedAllocationArgs(CPU_MEM)),
    ("InterPodAffinity", InterPodAffinityArgs(1, False)),
    ("PodTopologySpread", PodTopologySpreadArgs([], "System")),
    ("NodeAffinity", NodeAffinityArgs(None)),
    ("DefaultPreemption", DefaultPreemptionArgs(10, 100)),
    ("VolumeBinding", VolumeBindingArgs(600, [])),
    ("DynamicResources", DynamicResourcesArgs(10.0)),
]


@pytest.mark.parametrize(("name", "expected"), DEFAULTS, ids=[d[0] for d in DEFAULTS])
@pytest.mark.parametrize("raw", [None, {}], ids=["none", "empty"])
def test_defaults(name: str, expected: Any, raw: dict | None) -> None:
    assert DECODERS[name](raw, P) == expected


def test_decoders_cover_the_plugins_with_args() -> None:
    assert set(DECODERS) == {d[0] for d in DEFAULTS} == set(pa.PARSERS)


def test_dataclass_defaults_match_v1_defaults() -> None:
    assert NodeResourcesFitArgs() == DECODERS["NodeResourcesFit"](None, "")
    assert NodeResourcesBalancedAllocationArgs() == DECODERS["NodeResourcesBalancedAllocation"](None, "")
    assert ScoringStrategy().resources == CPU_MEM and ScoringStrategy().shape == []
    assert NodeResourcesFitArgs.__slots__  # slotted dataclasses


# --------------------------------------------------------------------------------------------------
# Valid args and their decoded form

VALID: list[tuple[str, str, dict, Any]] = [
    ("fit-least-weights", "NodeResourcesFit",
     {"scoringStrategy": {"type": "LeastAllocated", "resources": [
         {"name": "cpu", "weight": 1}, {"name": "memory", "weight": 3}, {"name": "example.com/foo", "weight": 5}]}},
     NodeResourcesFitArgs([], [], ScoringStrategy("LeastAllocated", [
         ResourceSpec("cpu", 1), ResourceSpec("memory", 3), ResourceSpec("example.com/foo", 5)], []))),
    ("fit-most", "NodeResourcesFit",
     {"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 2}]}},
     NodeResourcesFitArgs([], [], ScoringStrategy("MostAllocated", [ResourceSpec("cpu", 2)], []))),
    ("fit-rtcr", "NodeResourcesFit",
     {"scoringStrategy": {"type": "RequestedToCapacityRatio", "resources": [{"name": "cpu", "weight": 3}],
                          "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 2},
                                                                 {"utilization": 60, "score": 10},
                                                                 {"utilization": 100, "score": 3}]}}},
     NodeResourcesFitArgs([], [], ScoringStrategy("RequestedToCapacityRatio", [ResourceSpec("cpu", 3)], [
         UtilizationShapePoint(0, 2), UtilizationShapePoint(60, 10), UtilizationShapePoint(100, 3)]))),
    ("fit-shape-ignored-unless-rtcr", "NodeResourcesFit",
     {"scoringStrategy": {"type": "MostAllocated",
                          "requestedToCapacityRatio": {"shape": [{"utilization": 50, "score": 7}]}}},
     NodeResourcesFitArgs([], [], ScoringStrategy("MostAllocated", CPU_MEM, []))),
    ("fit-weight-0-becomes-1", "NodeResourcesFit",
     {"scoringStrategy": {"type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 0}, {"name": "gpu"}]}},
     NodeResourcesFitArgs([], [], ScoringStrategy("LeastAllocated", [ResourceSpec("cpu", 1), ResourceSpec("gpu", 1)],
                                                  []))),
    ("fit-empty-resources-default", "NodeResourcesFit",
     {"scoringStrategy": {"type": "MostAllocated", "resources": []}},
     NodeResourcesFitArgs([], [], ScoringStrategy("MostAllocated", CPU_MEM, []))),
    ("fit-ignored", "NodeResourcesFit",
     {"ignoredResources": ["example.com/foo"], "ignoredResourceGroups": ["example.com"]},
     NodeResourcesFitArgs(["example.com/foo"], ["example.com"], ScoringStrategy())),
    ("fit-typemeta", "NodeResourcesFit",
     {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "NodeResourcesFitArgs"},
     NodeResourcesFitArgs()),
    ("balanced-gpu", "NodeResourcesBalancedAllocation",
     {"resources": [{"name": "cpu", "weight": 1}, {"name": "memory"}, {"name": "nvidia.com/gpu", "weight": 1}]},
     NodeResourcesBalancedAllocationArgs([ResourceSpec("cpu", 1), ResourceSpec("memory", 1),
                                          ResourceSpec("nvidia.com/gpu", 1)])),
    ("ipa-weight", "InterPodAffinity", {"hardPodAffinityWeight": 10}, InterPodAffinityArgs(10, False)),
    ("ipa-weight-0", "InterPodAffinity", {"hardPodAffinityWeight": 0}, InterPodAffinityArgs(0, False)),
    ("ipa-ignore", "InterPodAffinity", {"ignorePreferredTermsOfExistingPods": True}, InterPodAffinityArgs(1, True)),
    ("pts-list", "PodTopologySpread",
     {"defaultingType": "List", "defaultConstraints": [
         {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway"}]},
     PodTopologySpreadArgs([{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                             "whenUnsatisfiable": "ScheduleAnyway"}], "List")),
    ("pts-list-empty", "PodTopologySpread", {"defaultingType": "List"}, PodTopologySpreadArgs([], "List")),
    ("na-added", "NodeAffinity",
     {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
         {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["foo", "bar"]}]}]},
         "preferredDuringSchedulingIgnoredDuringExecution": [
             {"weight": 5, "preference": {"matchExpressions": [
                 {"key": "disk", "operator": "In", "values": ["ssd"]}]}}]}},
     NodeAffinityArgs({"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
         {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["foo", "bar"]}]}]},
         "preferredDuringSchedulingIgnoredDuringExecution": [
             {"weight": 5, "preference": {"matchExpressions": [
                 {"key": "disk", "operator": "In", "values": ["ssd"]}]}}]})),
    ("na-empty", "NodeAffinity", {"addedAffinity": {}}, NodeAffinityArgs({})),
    ("na-fields-gt", "NodeAffinity",
     {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
         {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}],
          "matchExpressions": [{"key": "cores", "operator": "Gt", "values": ["4"]}]}, {}]}}},
     NodeAffinityArgs({"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
         {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}],
          "matchExpressions": [{"key": "cores", "operator": "Gt", "values": ["4"]}]}, {}]}})),
    ("na-weight-0-term-not-parsed", "NodeAffinity",
     {"addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
         {"weight": 0, "preference": {"matchExpressions": [{"key": "k", "operator": "Bad"}]}}]}},
     NodeAffinityArgs({"preferredDuringSchedulingIgnoredDuringExecution": [
         {"weight": 0, "preference": {"matchExpressions": [{"key": "k", "operator": "Bad"}]}}]})),
    ("dp-custom", "DefaultPreemption", {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 5},
     DefaultPreemptionArgs(0, 5)),
    ("vb-timeout", "VolumeBinding", {"bindTimeoutSeconds": 30}, VolumeBindingArgs(30, [])),
    ("vb-shape-null", "VolumeBinding", {"shape": None}, VolumeBindingArgs(600, [])),
    ("dra-timeout", "DynamicResources", {"filterTimeout": "1m30s"}, DynamicResourcesArgs(90.0)),
    ("dra-timeout-zero", "DynamicResources", {"filterTimeout": "0"}, DynamicResourcesArgs(0.0)),
    ("dra-timeout-ms", "DynamicResources", {"filterTimeout": "250ms"}, DynamicResourcesArgs(0.25)),
    ("dra-null", "DynamicResources", {"filterTimeout": None}, DynamicResourcesArgs(10.0)),
]


@pytest.mark.parametrize(("name", "raw", "expected"), [v[1:] for v in VALID], ids=[v[0] for v in VALID])
def test_valid_args(name: str, raw: dict, expected: Any) -> None:
    assert DECODERS[name](raw, P) == expected


def test_decoded_args_do_not_alias_input() -> None:
    raw = {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}}
    args = DECODERS["NodeAffinity"](raw, P)
    args.added_affinity["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"].append({})
    assert raw["addedAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"] == []


def test_default_resource_lists_are_fresh() -> None:
    a = DECODERS["NodeResourcesFit"](None, "")
    b = DECODERS["NodeResourcesFit"](None, "")
    a.scoring_strategy.resources.append(ResourceSpec("gpu", 1))
    assert b.scoring_strategy.resources == CPU_MEM


# --------------------------------------------------------------------------------------------------
# Validation errors: (id, plugin, raw args, every expected message in order)

INVALID: list[tuple[str, str, dict, list[str]]] = [
    ("fit-weight-101", "NodeResourcesFit",
     {"scoringStrategy": {"type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 101}]}},
     [f"{P}.scoringStrategy.resources[0].weight: Invalid value: 101: resource weight of cpu not in valid "
      "range (0, 100]"]),
    ("fit-weight-negative", "NodeResourcesFit",
     {"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "memory", "weight": -1}]}},
     [f"{P}.scoringStrategy.resources[0].weight: Invalid value: -1: resource weight of memory not in valid "
      "range (0, 100]"]),
    ("fit-type", "NodeResourcesFit", {"scoringStrategy": {"type": "Balanced"}},
     [f'{P}.scoringStrategy.type: Unsupported value: "Balanced": supported values: "LeastAllocated", '
      '"MostAllocated", "RequestedToCapacityRatio"']),
    ("fit-type-missing", "NodeResourcesFit", {"scoringStrategy": {"resources": [{"name": "cpu"}]}},
     [f'{P}.scoringStrategy.type: Unsupported value: "": supported values: "LeastAllocated", '
      '"MostAllocated", "RequestedToCapacityRatio"']),
    ("fit-shape-empty", "NodeResourcesFit",
     {"scoringStrategy": {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {"shape": []}}},
     [f"{P}.scoringStrategy.shape: Required value: at least one point must be specified"]),
    ("fit-rtcr-without-param", "NodeResourcesFit", {"scoringStrategy": {"type": "RequestedToCapacityRatio"}},
     [f"{P}.scoringStrategy.shape: Required value: at least one point must be specified"]),
    ("fit-shape-points", "NodeResourcesFit",
     {"scoringStrategy": {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {"shape": [
         {"utilization": 50, "score": 5}, {"utilization": 40, "score": 11}, {"utilization": 101, "score": -1}]}}},
     [f"{P}.scoringStrategy.shape[1].utilization: Invalid value: 40: values must be sorted in increasing order",
      f"{P}.scoringStrategy.shape[1].score: Invalid value: 11: not in valid range [0, 10]",
      f"{P}.scoringStrategy.shape[2].utilization: Invalid value: 101: not in valid range [0, 100]",
      f"{P}.scoringStrategy.shape[2].score: Invalid value: -1: not in valid range [0, 10]"]),
    ("fit-ignored-groups", "NodeResourcesFit", {"ignoredResourceGroups": ["example.com/foo"]},
     [f"{P}.ignoredResourceGroups[0]: Invalid value: \"example.com/foo\": resource group name can't contain '/'"]),
    ("fit-ignored-resource-name", "NodeResourcesFit", {"ignoredResources": ["-bad"]},
     [f"{P}.ignoredResources[0]: Invalid value: \"-bad\": name part must consist of alphanumeric characters, "
      "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  "
      "or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"]),
    ("balanced-weight-and-dup", "NodeResourcesBalancedAllocation",
     {"resources": [{"name": "cpu", "weight": 2}, {"name": "cpu", "weight": 1}]},
     [f"{P}.resources[0].weight: Invalid value: 2: must be 1",
      f'{P}.resources[1].name: Duplicate value: "cpu"']),
    ("ipa-101", "InterPodAffinity", {"hardPodAffinityWeight": 101},
     [f"{P}.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]"]),
    ("ipa-negative", "InterPodAffinity", {"hardPodAffinityWeight": -1},
     [f"{P}.hardPodAffinityWeight: Invalid value: -1: not in valid range [0, 100]"]),
    ("pts-system-with-constraints", "PodTopologySpread",
     {"defaultConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]},
     [f'{P}.defaultingType: Invalid value: "System": when .defaultConstraints are not empty']),
    ("pts-type", "PodTopologySpread", {"defaultingType": "Custom"},
     [f'{P}.defaultingType: Unsupported value: "Custom": supported values: "System", "List"']),
    ("pts-constraints", "PodTopologySpread",
     {"defaultingType": "List", "defaultConstraints": [
         {"maxSkew": 0, "topologyKey": "", "whenUnsatisfiable": "", "labelSelector": {"matchLabels": {"a": "b"}}},
         {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "Maybe"},
         {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "Maybe"}]},
     [f"{P}.defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf)",
      f"{P}.defaultConstraints[0].topologyKey: Required value: can not be empty",
      f"{P}.defaultConstraints[0].whenUnsatisfiable: Required value: can not be empty",
      f"{P}.defaultConstraints[0].labelSelector: Forbidden: constraint must not define a selector, as they "
      "deduced for each pod",
      f'{P}.defaultConstraints[1].whenUnsatisfiable: Unsupported value: "Maybe": supported values: '
      '"DoNotSchedule", "ScheduleAnyway"',
      f'{P}.defaultConstraints[2].whenUnsatisfiable: Unsupported value: "Maybe": supported values: '
      '"DoNotSchedule", "ScheduleAnyway"',
      f'{P}.defaultConstraints[2]: Duplicate value: "{{zone, Maybe}}"']),
    ("na-required", "NodeAffinity",
     {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
         {"matchExpressions": [{"key": "zone", "operator": "In"},
                               {"key": "zone", "operator": "Near", "values": ["a"]},
                               {"key": "cores", "operator": "Lt", "values": ["1", "x"]},
                               {"key": "k", "operator": "Exists", "values": ["a"]}],
          "matchFields": [{"key": "metadata.name", "operator": "Exists"},
                          {"key": "metadata.name", "operator": "In", "values": ["a", "b"]}]}]}}},
     [f"{P}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0]"
      ".values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty",
      f"{P}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[1]"
      '.operator: Unsupported value: "Near": supported values: "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"',
      f"{P}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[2]"
      ".values: Invalid value: [\"1\",\"x\"]: for 'Gt', 'Lt' operators, exactly one value is required",
      f"{P}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[2]"
      ".values[1]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer",
      f"{P}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[3]"
      ".values: Invalid value: [\"a\"]: values set must be empty for exists and does not exist",
      f"{P}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0]"
      '.operator: Unsupported value: "Exists": supported values: "In", "NotIn"',
      f"{P}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[1]"
      '.values: Invalid value: ["a","b"]: must have one element']),
    ("na-preferred-path-has-no-preference", "NodeAffinity",
     {"addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
         {"weight": 1, "preference": {"matchExpressions": [{"key": "k", "operator": "In", "values": ["a b"]}]}}]}},
     [f"{P}.addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].matchExpressions[0].values[0][k]: "
      "Invalid value: \"a b\": a valid label must be an empty string or consist of alphanumeric characters, "
      "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  "
      "or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"]),
    ("dp-ranges", "DefaultPreemption", {"minCandidateNodesPercentage": 101, "minCandidateNodesAbsolute": -1},
     [f"{P}.minCandidateNodesPercentage: Invalid value: 101: not in valid range [0, 100]",
      f"{P}.minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)"]),
    ("dp-both-zero", "DefaultPreemption", {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
     [f"{P}.minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as "
      "minCandidateNodesAbsolute",
      f"{P}.minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same time as "
      "minCandidateNodesPercentage"]),
    ("vb-negative", "VolumeBinding", {"bindTimeoutSeconds": -1},
     [f"{P}.bindTimeoutSeconds: Invalid value: -1: invalid BindTimeoutSeconds, should not be a negative value"]),
    ("vb-shape-gate-off", "VolumeBinding", {"shape": [{"utilization": 0, "score": 10}]},
     [f'{P}.shape: Invalid value: [{{"Utilization":0,"Score":10}}]: unexpected field `shape`, remove it or '
      "turn on the feature gate StorageCapacityScoring"]),
    ("vb-shape-empty-list", "VolumeBinding", {"shape": []},
     [f"{P}.shape: Invalid value: []: unexpected field `shape`, remove it or turn on the feature gate "
      "StorageCapacityScoring"]),
    ("dra-negative", "DynamicResources", {"filterTimeout": "-1.5s"},
     [f'{P}.filterTimeout: Invalid value: "-1.5s": must be zero or positive']),
]


@pytest.mark.parametrize(("name", "raw", "expected"), [v[1:] for v in INVALID], ids=[v[0] for v in INVALID])
def test_invalid_args(name: str, raw: dict, expected: list[str]) -> None:
    with pytest.raises(ConfigError) as info:
        DECODERS[name](raw, P)
    assert messages(info.value) == expected
    assert isinstance(info.value, ConfigErrors) == (len(expected) > 1)


def test_error_fields_hold_the_path() -> None:
    with pytest.raises(ConfigError) as info:
        DECODERS["InterPodAffinity"]({"hardPodAffinityWeight": 101}, P)
    assert info.value.field == f"{P}.hardPodAffinityWeight"
    assert info.value.detail == "Invalid value: 101: not in valid range [0, 100]"


# --------------------------------------------------------------------------------------------------
# Decoding errors (strict decoding, types, TypeMeta)

DECODE_ERRORS: list[tuple[str, str, Any, str]] = [
    ("unknown-field", "InterPodAffinity", {"hardPodAffinityWeigth": 1},
     f'{P}: decoding args for plugin InterPodAffinity: strict decoding error: unknown field '
     '"hardPodAffinityWeigth" (did you mean "hardPodAffinityWeight"?)'),
    ("unknown-nested", "NodeResourcesFit", {"scoringStrategy": {"type": "LeastAllocated", "shape": []}},
     f'{P}.scoringStrategy: decoding args for plugin NodeResourcesFit: strict decoding error: unknown field '
     '"shape"'),
    ("unknown-resource-field", "NodeResourcesBalancedAllocation", {"resources": [{"name": "cpu", "wieght": 1}]},
     f'{P}.resources[0]: decoding args for plugin NodeResourcesBalancedAllocation: strict decoding error: '
     'unknown field "wieght" (did you mean "weight"?)'),
    ("unknown-constraint-field", "PodTopologySpread",
     {"defaultingType": "List", "defaultConstraints": [{"maxSkew": 1, "topologyKeys": "zone"}]},
     f'{P}.defaultConstraints[0]: decoding args for plugin PodTopologySpread: strict decoding error: unknown '
     'field "topologyKeys" (did you mean "topologyKey"?)'),
    ("unknown-affinity-field", "NodeAffinity",
     {"addedAffinity": {"requiredDuringSchedulingRequiredDuringExecution": {}}},
     f'{P}.addedAffinity: decoding args for plugin NodeAffinity: strict decoding error: unknown field '
     '"requiredDuringSchedulingRequiredDuringExecution" (did you mean '
     '"requiredDuringSchedulingIgnoredDuringExecution"?)'),
    ("string-for-int", "InterPodAffinity", {"hardPodAffinityWeight": "10"},
     f"{P}.hardPodAffinityWeight: decoding args for plugin InterPodAffinity: json: cannot unmarshal string into "
     "Go value of type int32"),
    ("bool-for-int", "DefaultPreemption", {"minCandidateNodesAbsolute": True},
     f"{P}.minCandidateNodesAbsolute: decoding args for plugin DefaultPreemption: json: cannot unmarshal bool "
     "into Go value of type int32"),
    ("float-for-int", "InterPodAffinity", {"hardPodAffinityWeight": 1.5},
     f"{P}.hardPodAffinityWeight: decoding args for plugin InterPodAffinity: json: cannot unmarshal number 1.5 "
     "into Go value of type int32"),
    ("int32-overflow", "InterPodAffinity", {"hardPodAffinityWeight": 2**31},
     f"{P}.hardPodAffinityWeight: decoding args for plugin InterPodAffinity: json: cannot unmarshal number "
     "2147483648 into Go value of type int32"),
    ("int-for-bool", "InterPodAffinity", {"ignorePreferredTermsOfExistingPods": 1},
     f"{P}.ignorePreferredTermsOfExistingPods: decoding args for plugin InterPodAffinity: json: cannot unmarshal "
     "number 1 into Go value of type bool"),
    ("list-for-object", "NodeResourcesFit", {"scoringStrategy": []},
     f"{P}.scoringStrategy: decoding args for plugin NodeResourcesFit: json: cannot unmarshal array into Go "
     "value of type ScoringStrategy"),
    ("args-not-object", "InterPodAffinity", [1],
     f"{P}: decoding args for plugin InterPodAffinity: json: cannot unmarshal array into Go value of type "
     "InterPodAffinityArgs"),
    ("bad-duration", "DynamicResources", {"filterTimeout": "10 seconds"},
     f'{P}.filterTimeout: decoding args for plugin DynamicResources: time: invalid duration "10 seconds"'),
    ("duration-number", "DynamicResources", {"filterTimeout": 10},
     f"{P}.filterTimeout: decoding args for plugin DynamicResources: json: cannot unmarshal number 10 into Go "
     "value of type string"),
    ("wrong-kind", "NodeAffinity", {"kind": "InterPodAffinityArgs"},
     f"{P}.kind: decoding args for plugin NodeAffinity: args for plugin NodeAffinity were not of type "
     "NodeAffinityArgs.kubescheduler.config.k8s.io, got InterPodAffinityArgs.kubescheduler.config.k8s.io"),
    ("wrong-api-version", "InterPodAffinity", {"apiVersion": "kubescheduler.config.k8s.io/v1beta3"},
     f'{P}.apiVersion: decoding args for plugin InterPodAffinity: args for plugin InterPodAffinity must be '
     'kubescheduler.config.k8s.io/v1, got "kubescheduler.config.k8s.io/v1beta3"'),
]


@pytest.mark.parametrize(("name", "raw", "expected"), [v[1:] for v in DECODE_ERRORS],
                         ids=[v[0] for v in DECODE_ERRORS])
def test_decode_errors(name: str, raw: Any, expected: str) -> None:
    with pytest.raises(ConfigError) as info:
        DECODERS[name](raw, P)
    assert str(info.value) == expected


def test_empty_path_gives_no_field() -> None:
    with pytest.raises(ConfigError) as info:
        DECODERS["InterPodAffinity"]({"bogus": 1}, "")
    assert info.value.field is None
    assert str(info.value) == ('decoding args for plugin InterPodAffinity: strict decoding error: unknown field '
                               '"bogus"')


# --------------------------------------------------------------------------------------------------
# Helpers: Go durations, qualified names

DURATIONS = [("0", 0), ("1s", 10**9), ("1.5s", 1_500_000_000), ("1m30s", 90 * 10**9), ("-2h", -7200 * 10**9),
             ("250ms", 250 * 10**6), ("3us", 3000), ("3µs", 3000), ("7ns", 7), ("+1h2m3.5s", 3723_500_000_000),
             (".5s", 500_000_000)]


@pytest.mark.parametrize(("text", "ns"), DURATIONS, ids=[d[0] for d in DURATIONS])
def test_parse_go_duration(text: str, ns: int) -> None:
    assert pa.parse_go_duration(text) == ns


@pytest.mark.parametrize("text", ["", "1", "s", "1d", "1s2", "--1s", "1 s"])
def test_parse_go_duration_rejects(text: str) -> None:
    with pytest.raises(ValueError, match="time: invalid duration"):
        pa.parse_go_duration(text)


FORMATS = [(0, "0s"), (7, "7ns"), (1500, "1.5µs"), (250 * 10**6, "250ms"), (10**9, "1s"), (90 * 10**9, "1m30s"),
           (3600 * 10**9, "1h0m0s"), (-1_500_000_000, "-1.5s"), (3723_500_000_000, "1h2m3.5s")]


@pytest.mark.parametrize(("ns", "text"), FORMATS, ids=[f[1] for f in FORMATS])
def test_format_go_duration(ns: int, text: str) -> None:
    assert pa.format_go_duration(ns) == text


QNAMES = [
    ("zone", []),
    ("topology.kubernetes.io/zone", []),
    ("a" * 63, []),
    ("a" * 64, ["name part must be no more than 63 characters"]),
    ("/zone", ["prefix part must be non-empty"]),
    ("Example.com/zone", ["prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                          "characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
                          "'example.com', regex used for validation is "
                          "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"]),
    ("example.com/", ["name part must be non-empty",
                      "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
                      "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
                      "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"]),
]


@pytest.mark.parametrize(("name", "errors"), QNAMES, ids=[q[0][:20] or "empty" for q in QNAMES])
def test_qualified_name_errors(name: str, errors: list[str]) -> None:
    assert pa.qualified_name_errors(name) == errors


def test_trailing_newline_is_not_a_valid_name() -> None:
    assert pa.qualified_name_errors("zone\n")
    assert pa.label_value_errors("v\n")
