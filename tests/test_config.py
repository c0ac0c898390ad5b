"""KubeSchedulerConfiguration: v1 defaults, merging, MultiPoint expansion, validation, file loading."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from pysched.errors import ConfigError
from pysched.framework import plugin_args as pa
from pysched.framework.config import (
    EXTENSION_POINT_KEYS,
    PluginRef,
    SchedulerConfig,
    build_config,
    default_plugins,
    load_config,
)
from pysched.framework.plugin_args import (
    ConfigErrors,
    InterPodAffinityArgs,
    NodeResourcesFitArgs,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
)
from tests.fake_registry import fake_registry, fake_spec

HEADER = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
REGISTRY = fake_registry()


def build(body: str, registry: Any = REGISTRY) -> SchedulerConfig:
    return build_config(yaml.safe_load(HEADER + body), registry)


def names(cfg: SchedulerConfig, point: str, profile: int = 0) -> list[str]:
    return [r.name for r in cfg.profiles[profile].enabled(point)]


def scores(cfg: SchedulerConfig, profile: int = 0) -> list[tuple[str, int]]:
    return [(r.name, r.weight) for r in cfg.profiles[profile].enabled("score")]


# --------------------------------------------------------------------------------------------------
# Defaults (reference §1)

DEFAULT_POINTS: dict[str, list[str]] = {
    "preEnqueue": ["SchedulingGates", "DynamicResources", "DefaultPreemption"],
    "queueSort": ["PrioritySort"],
    "preFilter": ["NodeAffinity", "NodePorts", "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits",
                  "VolumeBinding", "VolumeZone", "PodTopologySpread", "InterPodAffinity", "DynamicResources"],
    "filter": ["NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit",
               "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread",
               "InterPodAffinity", "DynamicResources"],
    "postFilter": ["DynamicResources", "DefaultPreemption"],
    "preScore": ["TaintToleration", "NodeAffinity", "NodeResourcesFit", "VolumeBinding", "PodTopologySpread",
                 "InterPodAffinity", "NodeResourcesBalancedAllocation"],
    "score": ["TaintToleration", "NodeAffinity", "NodeResourcesFit", "VolumeBinding", "PodTopologySpread",
              "InterPodAffinity", "NodeResourcesBalancedAllocation", "ImageLocality"],
    "reserve": ["VolumeBinding", "DynamicResources"],
    "permit": [],
    "preBind": ["VolumeBinding", "DynamicResources"],
    "bind": ["DefaultBinder"],
    "postBind": [],
}
DEFAULT_SCORES = [("TaintToleration", 3), ("NodeAffinity", 2), ("NodeResourcesFit", 1), ("VolumeBinding", 1),
                  ("PodTopologySpread", 2), ("InterPodAffinity", 2), ("NodeResourcesBalancedAllocation", 1),
                  ("ImageLocality", 1)]


def test_default_plugins_list() -> None:
    assert default_plugins() == [
        PluginRef("SchedulingGates"), PluginRef("PrioritySort"), PluginRef("NodeUnschedulable"),
        PluginRef("NodeName"), PluginRef("TaintToleration", 3), PluginRef("NodeAffinity", 2),
        PluginRef("NodePorts"), PluginRef("NodeResourcesFit", 1), PluginRef("VolumeRestrictions"),
        PluginRef("NodeVolumeLimits"), PluginRef("VolumeBinding"), PluginRef("VolumeZone"),
        PluginRef("PodTopologySpread", 2), PluginRef("InterPodAffinity", 2), PluginRef("DynamicResources"),
        PluginRef("DefaultPreemption"), PluginRef("NodeResourcesBalancedAllocation", 1),
        PluginRef("ImageLocality", 1), PluginRef("DefaultBinder")]


@pytest.mark.parametrize("source", ["none", "empty-v1", "one-empty-profile"])
@pytest.mark.parametrize("point", EXTENSION_POINT_KEYS)
def test_default_profile_points(point: str, source: str) -> None:
    raw = {"none": None, "empty-v1": yaml.safe_load(HEADER),
           "one-empty-profile": yaml.safe_load(HEADER + "profiles:\n- {}\n")}[source]
    cfg = build_config(raw, REGISTRY)
    assert names(cfg, point) == DEFAULT_POINTS[point]
    expected_weights = dict(DEFAULT_SCORES) if point == "score" else {}
    assert [r.weight for r in cfg.profiles[0].enabled(point)] == [expected_weights.get(n, 0)
                                                                   for n in DEFAULT_POINTS[point]]


def test_default_config_scalars() -> None:
    cfg = build_config(None, REGISTRY)
    assert [p.scheduler_name for p in cfg.profiles] == ["default-scheduler"]
    assert cfg.percentage_of_nodes_to_score == 0
    assert cfg.parallelism == 16
    assert cfg.extenders == []
    assert cfg.source == "default"
    assert cfg.profiles[0].percentage_of_nodes_to_score is None
    assert scores(cfg) == DEFAULT_SCORES
    assert set(cfg.profiles[0].plugins) == set(EXTENSION_POINT_KEYS)


def test_default_plugin_args_are_typed() -> None:
    args = build_config(None, REGISTRY).profiles[0].plugin_args
    assert set(args) == set(pa.DECODERS)
    for name, value in args.items():
        assert value == pa.DECODERS[name](None, "")


# --------------------------------------------------------------------------------------------------
# Merging custom plugins into the defaults and expanding MultiPoint

MERGES: list[tuple[str, str, str, list[Any]]] = [
    ("score-weight-override-in-place",
     "profiles:\n- plugins:\n    score:\n      enabled:\n      - {name: NodeResourcesFit, weight: 20}\n"
     "      - {name: ImageLocality, weight: 3}\n",
     "score", [("NodeResourcesFit", 20), ("ImageLocality", 3), ("TaintToleration", 3), ("NodeAffinity", 2),
               ("VolumeBinding", 1), ("PodTopologySpread", 2), ("InterPodAffinity", 2),
               ("NodeResourcesBalancedAllocation", 1)]),
    ("disable-one-score",
     "profiles:\n- plugins:\n    score:\n      disabled:\n      - name: ImageLocality\n",
     "score", DEFAULT_SCORES[:-1]),
    ("disable-at-score-keeps-prescore",
     "profiles:\n- plugins:\n    score:\n      disabled:\n      - name: TaintToleration\n",
     "preScore", DEFAULT_POINTS["preScore"]),
    ("disable-at-score-keeps-filter",
     "profiles:\n- plugins:\n    score:\n      disabled:\n      - name: TaintToleration\n",
     "filter", DEFAULT_POINTS["filter"]),
    ("disable-star-at-score",
     "profiles:\n- plugins:\n    score:\n      disabled:\n      - name: '*'\n      enabled:\n"
     "      - {name: ImageLocality, weight: 5}\n",
     "score", [("ImageLocality", 5)]),
    ("disable-star-at-filter-keeps-custom-order",
     "profiles:\n- plugins:\n    filter:\n      disabled:\n      - name: '*'\n      enabled:\n"
     "      - name: TaintToleration\n      - name: NodeName\n",
     "filter", ["TaintToleration", "NodeName"]),
    ("score-entry-without-weight-gets-1",
     "profiles:\n- plugins:\n    score:\n      enabled:\n      - name: TaintToleration\n",
     "score", [("TaintToleration", 1), *DEFAULT_SCORES[1:]]),
    ("score-weight-0-becomes-1",
     "profiles:\n- plugins:\n    score:\n      enabled:\n      - {name: InterPodAffinity, weight: 0}\n",
     "score", [("InterPodAffinity", 1)] + [s for s in DEFAULT_SCORES if s[0] != "InterPodAffinity"]),
    ("filter-override-moves-first",
     "profiles:\n- plugins:\n    filter:\n      enabled:\n      - name: NodeAffinity\n",
     "filter", ["NodeAffinity"] + [n for n in DEFAULT_POINTS["filter"] if n != "NodeAffinity"]),
    ("multipoint-weight-replaced-in-place",
     "profiles:\n- plugins:\n    multiPoint:\n      enabled:\n      - {name: TaintToleration, weight: 7}\n",
     "score", [("TaintToleration", 7), *DEFAULT_SCORES[1:]]),
    ("multipoint-disable-removes-everywhere",
     "profiles:\n- plugins:\n    multiPoint:\n      disabled:\n      - name: DynamicResources\n",
     "preBind", ["VolumeBinding"]),
    ("multipoint-disable-star-and-list",
     "profiles:\n- plugins:\n    multiPoint:\n      disabled:\n      - name: '*'\n      enabled:\n"
     "      - name: PrioritySort\n      - name: NodeName\n      - {name: ImageLocality, weight: 4}\n"
     "      - name: DefaultBinder\n",
     "score", [("ImageLocality", 4)]),
    ("specific-point-addition-after-multipoint",
     "profiles:\n- plugins:\n    preScore:\n      disabled:\n      - name: '*'\n    score:\n      disabled:\n"
     "      - name: '*'\n      enabled:\n      - {name: NodeResourcesFit, weight: 2}\n",
     "preScore", []),
    ("balanced-and-fit-weights-030",
     "profiles:\n- plugins:\n    score:\n      enabled:\n      - {name: NodeResourcesBalancedAllocation, weight: 5}\n"
     "      - {name: NodeResourcesFit, weight: 2}\n      disabled:\n      - name: TaintToleration\n",
     "score", [("NodeResourcesBalancedAllocation", 5), ("NodeResourcesFit", 2), ("NodeAffinity", 2),
               ("VolumeBinding", 1), ("PodTopologySpread", 2), ("InterPodAffinity", 2), ("ImageLocality", 1)]),
    ("negative-weight-kept",
     "profiles:\n- plugins:\n    score:\n      enabled:\n      - {name: ImageLocality, weight: -3}\n",
     "score", [("ImageLocality", -3), *DEFAULT_SCORES[:-1]]),
]


@pytest.mark.parametrize(("body", "point", "expected"), [m[1:] for m in MERGES], ids=[m[0] for m in MERGES])
def test_merging(body: str, point: str, expected: list[Any]) -> None:
    cfg = build(body)
    got = scores(cfg) if expected and isinstance(expected[0], tuple) else names(cfg, point)
    assert got == expected


OUT_OF_TREE = [fake_spec("Coscheduling", ("queueSort", "preFilter", "postFilter", "permit", "reserve")),
               fake_spec("MyScore", ("preScore", "score"), source="out-of-tree",
                         decoder=lambda raw: {"decoded": dict(raw or {})}),
               fake_spec("MyFilter", ("filter",), source="out-of-tree")]
OOT_REGISTRY = fake_registry(OUT_OF_TREE)


def test_multipoint_custom_plugin_is_appended_to_its_points() -> None:
    cfg = build("profiles:\n- plugins:\n    multiPoint:\n      enabled:\n      - {name: MyScore, weight: 4}\n"
                "      - name: MyFilter\n", OOT_REGISTRY)
    assert names(cfg, "filter") == DEFAULT_POINTS["filter"] + ["MyFilter"]
    assert names(cfg, "preScore") == DEFAULT_POINTS["preScore"] + ["MyScore"]
    assert scores(cfg) == [*DEFAULT_SCORES, ("MyScore", 4)]
    assert cfg.profiles[0].plugin_args["MyScore"] == {"decoded": {}}
    assert "MyFilter" not in cfg.profiles[0].plugin_args


def test_out_of_tree_args() -> None:
    cfg = build("profiles:\n- plugins:\n    multiPoint:\n      enabled:\n      - name: MyScore\n      - name: MyFilter\n"
                "  pluginConfig:\n  - name: MyScore\n    args: {a: 1}\n  - name: MyFilter\n    args: {b: [2]}\n",
                OOT_REGISTRY)
    assert cfg.profiles[0].plugin_args["MyScore"] == {"decoded": {"a": 1}}
    assert cfg.profiles[0].plugin_args["MyFilter"] == {"b": [2]}


def test_out_of_tree_decoder_error_gets_the_path() -> None:
    def refuse(raw: Any) -> Any:
        raise ConfigError("Invalid value: 0: must be positive", field="size")
    registry = fake_registry([fake_spec("Picky", ("filter",), source="out-of-tree", decoder=refuse)])
    with pytest.raises(ConfigError) as info:
        build("profiles:\n- pluginConfig:\n  - name: Picky\n    args: {size: 0}\n", registry)
    assert str(info.value) == "profiles[0].pluginConfig[0].args.size: Invalid value: 0: must be positive"


def test_replacing_the_queue_sort_plugin() -> None:
    cfg = build("profiles:\n- plugins:\n    queueSort:\n      enabled:\n      - name: Coscheduling\n"
                "      disabled:\n      - name: '*'\n    multiPoint:\n      disabled:\n      - name: PrioritySort\n",
                OOT_REGISTRY)
    assert names(cfg, "queueSort") == ["Coscheduling"]
    assert names(cfg, "permit") == []


def test_plugin_args_from_plugin_config() -> None:
    cfg = build("profiles:\n- pluginConfig:\n  - name: InterPodAffinity\n    args: {hardPodAffinityWeight: 10}\n"
                "  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n        type: RequestedToCapacityRatio\n"
                "        resources: [{name: cpu, weight: 3}]\n        requestedToCapacityRatio:\n"
                "          shape: [{utilization: 0, score: 2}, {utilization: 100, score: 10}]\n")
    args = cfg.profiles[0].plugin_args
    assert args["InterPodAffinity"] == InterPodAffinityArgs(10, False)
    assert args["NodeResourcesFit"] == NodeResourcesFitArgs([], [], ScoringStrategy(
        "RequestedToCapacityRatio", [ResourceSpec("cpu", 3)],
        [UtilizationShapePoint(0, 2), UtilizationShapePoint(100, 10)]))
    assert args["DefaultPreemption"] == pa.DefaultPreemptionArgs()


def test_args_only_for_plugins_of_the_profile() -> None:
    cfg = build("profiles:\n- plugins:\n    multiPoint:\n      disabled:\n      - name: InterPodAffinity\n")
    assert "InterPodAffinity" not in cfg.profiles[0].plugin_args
    assert "InterPodAffinity" not in cfg.profiles[0].all_plugin_names()


def test_plugin_config_for_a_plugin_not_enabled_is_accepted() -> None:
    cfg = build("profiles:\n- plugins:\n    multiPoint:\n      disabled:\n      - name: InterPodAffinity\n"
                "  pluginConfig:\n  - name: InterPodAffinity\n    args: {hardPodAffinityWeight: 5}\n"
                "  - name: ImageLocality\n    args: {anything: 1}\n  - name: NotAPlugin\n    args: {x: 1}\n")
    assert "InterPodAffinity" not in cfg.profiles[0].plugin_args
    assert "ImageLocality" not in cfg.profiles[0].plugin_args


def test_invalid_args_of_a_plugin_not_enabled_are_still_refused() -> None:
    with pytest.raises(ConfigError, match=r"hardPodAffinityWeight: Invalid value: 500"):
        build("profiles:\n- plugins:\n    multiPoint:\n      disabled:\n      - name: InterPodAffinity\n"
              "  pluginConfig:\n  - name: InterPodAffinity\n    args: {hardPodAffinityWeight: 500}\n")


def test_fit_args_are_checked_only_when_the_plugin_is_built() -> None:
    """Upstream's validation table keys NodeResourcesFit as "NodeResourcesFitArgs", so only NewFit checks."""
    body = ("  pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n"
            "        type: LeastAllocated\n        resources: [{name: cpu, weight: 200}]\n")
    cfg = build("profiles:\n- plugins:\n    multiPoint:\n      disabled:\n      - name: NodeResourcesFit\n" + body)
    assert "NodeResourcesFit" not in cfg.profiles[0].plugin_args
    with pytest.raises(ConfigError) as info:
        build("profiles:\n- schedulerName: default-scheduler\n" + body)
    assert str(info.value) == ("profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight: Invalid "
                               "value: 200: resource weight of cpu not in valid range (0, 100]")


def test_profiles_and_percentages() -> None:
    cfg = build("percentageOfNodesToScore: 100\nparallelism: 4\nprofiles:\n- schedulerName: default-scheduler\n"
                "  percentageOfNodesToScore: 50\n- schedulerName: alt-scheduler\n")
    assert [p.scheduler_name for p in cfg.profiles] == ["default-scheduler", "alt-scheduler"]
    assert cfg.percentage_of_nodes_to_score == 100
    assert cfg.parallelism == 4
    assert [p.percentage_of_nodes_to_score for p in cfg.profiles] == [50, None]
    assert cfg.profile("alt-scheduler") is cfg.profiles[1]
    assert cfg.profile("missing") is None


def test_single_profile_gets_a_custom_name() -> None:
    assert build("profiles:\n- schedulerName: mine\n").profiles[0].scheduler_name == "mine"


def test_ignored_fields_are_accepted() -> None:
    cfg = build("leaderElection: {leaderElect: false, resourceLock: leases}\n"
                "clientConnection: {kubeconfig: /x, qps: 20.5, burst: 30, contentType: a, acceptContentTypes: b}\n"
                "enableProfiling: false\nenableContentionProfiling: false\npodInitialBackoffSeconds: 2\n"
                "podMaxBackoffSeconds: 20\ndelayCacheUntilActive: true\n"
                "extenders:\n- urlPrefix: http://x\n  filterVerb: filter\n  prioritizeVerb: prio\n  weight: 2\n"
                "  httpTimeout: 5s\n  tlsConfig: {insecure: true}\n  managedResources: [{name: example.com/gpu}]\n")
    assert [e.raw for e in cfg.extenders] == [{
        "urlPrefix": "http://x", "filterVerb": "filter", "prioritizeVerb": "prio", "weight": 2, "httpTimeout": "5s",
        "tlsConfig": {"insecure": True}, "managedResources": [{"name": "example.com/gpu"}]}]


# --------------------------------------------------------------------------------------------------
# Validation and decoding errors: (id, YAML after the header, exact message lines)

ERRORS: list[tuple[str, str, list[str]]] = [
    ("unknown-top-field", "percentageOfNodeToScore: 50\n",
     ['strict decoding error: unknown field "percentageOfNodeToScore" (did you mean "percentageOfNodesToScore"?)']),
    ("removed-healthz-field", "healthzBindAddress: 0.0.0.0:10251\n",
     ['strict decoding error: unknown field "healthzBindAddress" (it is not part of kubescheduler.config.k8s.io/v1: '
      "serve health checks with kube-scheduler's --bind-address/--secure-port flags)"]),
    ("unknown-profile-field", "profiles:\n- schedulerName: a\n  plugin: {}\n",
     ['profiles[0]: strict decoding error: unknown field "plugin" (did you mean "plugins"?)']),
    ("unknown-point", "profiles:\n- plugins:\n    scores: {}\n",
     ['profiles[0].plugins: strict decoding error: unknown field "scores" (did you mean "score"?)']),
    ("unknown-plugin-field", "profiles:\n- plugins:\n    score:\n      enabled:\n      - {name: A, wieght: 1}\n",
     ['profiles[0].plugins.score.enabled[0]: strict decoding error: unknown field "wieght" (did you mean '
      '"weight"?)']),
    ("type-error", "percentageOfNodesToScore: half\n",
     ["percentageOfNodesToScore: json: cannot unmarshal string into Go value of type int32"]),
    ("weight-not-int32", "profiles:\n- plugins:\n    score:\n      enabled:\n      - {name: ImageLocality, "
     "weight: 3000000000}\n",
     ["profiles[0].plugins.score.enabled[0].weight: json: cannot unmarshal number 3000000000 into Go value of "
      "type int32"]),
    ("profiles-not-list", "profiles: {schedulerName: a}\n",
     ["profiles: json: cannot unmarshal object into Go value of type []"]),
    ("percentage-high", "percentageOfNodesToScore: 101\n",
     ["percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]"]),
    ("profile-percentage-negative", "profiles:\n- percentageOfNodesToScore: -1\n",
     ["profiles[0].percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]"]),
    ("parallelism-zero", "parallelism: 0\n",
     ["parallelism: Invalid value: 0: should be an integer value greater than zero"]),
    ("backoff", "podInitialBackoffSeconds: 0\npodMaxBackoffSeconds: -1\n",
     ["podInitialBackoffSeconds: Invalid value: 0: must be greater than 0",
      "podMaxBackoffSeconds: Invalid value: -1: must be greater than or equal to PodInitialBackoffSeconds"]),
    ("duplicate-scheduler-name", "profiles:\n- schedulerName: a\n- schedulerName: b\n- schedulerName: a\n",
     ['profiles[2].schedulerName: Duplicate value: "a" (already used by profiles[0].schedulerName)']),
    ("missing-scheduler-name", "profiles:\n- schedulerName: a\n- percentageOfNodesToScore: 1\n",
     ["profiles[1].schedulerName: Required value"]),
    ("unknown-plugin", "profiles:\n- plugins:\n    score:\n      enabled:\n      - name: ImageLocalty\n",
     ['profiles[0].plugins.score.enabled[0]: creating profile for scheduler name default-scheduler: ScorePlugin '
      '"ImageLocalty" does not exist (did you mean "ImageLocality"?)']),
    ("unknown-multipoint-plugin", "profiles:\n- plugins:\n    multiPoint:\n      enabled:\n      - name: Nope\n",
     ['profiles[0].plugins.multiPoint.enabled[0]: creating profile for scheduler name default-scheduler: '
      'PreFilterPlugin "Nope" does not exist']),
    ("plugin-lacks-point", "profiles:\n- plugins:\n    filter:\n      enabled:\n      - name: ImageLocality\n",
     ['profiles[0].plugins.filter.enabled[0]: creating profile for scheduler name default-scheduler: plugin '
      '"ImageLocality" does not extend FilterPlugin plugin']),
    ("duplicate-plugin-in-point",
     "profiles:\n- plugins:\n    score:\n      enabled:\n      - name: ImageLocality\n      - name: ImageLocality\n",
     ['profiles[0].plugins.score.enabled[1]: creating profile for scheduler name default-scheduler: plugin '
      '"ImageLocality" already registered as "ScorePlugin"']),
    ("duplicate-multipoint-plugin",
     "profiles:\n- plugins:\n    multiPoint:\n      enabled:\n      - name: MyFilter\n      - name: MyFilter\n",
     ['profiles[0].plugins.multiPoint.enabled[1]: creating profile for scheduler name default-scheduler: plugin '
      '"MyFilter" already registered as "FilterPlugin"']),
    ("no-queue-sort", "profiles:\n- plugins:\n    multiPoint:\n      disabled:\n      - name: PrioritySort\n",
     ['profiles[0].plugins: creating profile for scheduler name default-scheduler: only one queue sort plugin '
      'required for profile with scheduler name "default-scheduler", but got 0']),
    ("two-queue-sorts-multipoint", "profiles:\n- plugins:\n    multiPoint:\n      enabled:\n      - name: Coscheduling\n",
     ['profiles[0].plugins: creating profile for scheduler name default-scheduler: only one queue sort plugin '
      'required for profile with scheduler name "default-scheduler", but got 2']),
    ("two-queue-sorts-point",
     "profiles:\n- plugins:\n    queueSort:\n      enabled:\n      - name: PrioritySort\n      - name: Coscheduling\n",
     ["profiles[0].plugins.queueSort.Enabled: Invalid value: 2: only one queue sort plugin can be enabled"]),
    ("no-bind", "profiles:\n- plugins:\n    bind:\n      disabled:\n      - name: DefaultBinder\n",
     ['profiles[0].plugins: creating profile for scheduler name default-scheduler: at least one bind plugin is '
      'needed for profile with scheduler name "default-scheduler"']),
    ("different-queue-sort-sets",
     "profiles:\n- schedulerName: a\n- schedulerName: b\n  plugins:\n    queueSort:\n      enabled:\n"
     "      - name: Coscheduling\n      disabled:\n      - name: '*'\n",
     ['profiles[1].plugins.queueSort: Invalid value: {"Enabled":[{"Name":"Coscheduling","Weight":0}],'
      '"Disabled":[{"Name":"*","Weight":0}]}: must be the same for all profiles']),
    ("different-queue-sort-plugins",
     "profiles:\n- schedulerName: a\n- schedulerName: b\n  plugins:\n    multiPoint:\n      enabled:\n"
     "      - name: Coscheduling\n      disabled:\n      - name: PrioritySort\n",
     ['profiles[1].plugins: different queue sort plugins for profile "b": "Coscheduling", first: "PrioritySort"']),
    ("different-queue-sort-args",
     "profiles:\n- schedulerName: a\n- schedulerName: b\n  pluginConfig:\n  - name: PrioritySort\n    args: {x: 1}\n",
     ['profiles[1].pluginConfig: different queue sort plugin args for profile "b"']),
    ("duplicate-plugin-config",
     "profiles:\n- pluginConfig:\n  - name: InterPodAffinity\n  - name: InterPodAffinity\n",
     ['profiles[0].pluginConfig[1]: Duplicate value: "InterPodAffinity"']),
    ("bad-args", "profiles:\n- pluginConfig:\n  - name: InterPodAffinity\n    args: {hardPodAffinityWeight: 101}\n",
     ["profiles[0].pluginConfig[0].args.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]"]),
    ("unknown-args-field", "profiles:\n- pluginConfig:\n  - name: DefaultPreemption\n    args: {minCandidates: 1}\n",
     ['profiles[0].pluginConfig[0].args: decoding args for plugin DefaultPreemption: strict decoding error: '
      'unknown field "minCandidates" (did you mean "minCandidateNodesAbsolute"?)']),
    ("removed-plugin", "profiles:\n- plugins:\n    filter:\n      enabled:\n      - name: EBSLimits\n",
     ['profiles[0].plugins.filter.enabled[0]: Invalid value: "EBSLimits": was invalid in version '
      '"kubescheduler.config.k8s.io/v1" (KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")']),
    ("removed-plugin-config", "profiles:\n- pluginConfig:\n  - name: GCEPDLimits\n",
     ['profiles[0].pluginConfig[0]: Invalid value: "GCEPDLimits": was invalid in version '
      '"kubescheduler.config.k8s.io/v1" (KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")']),
    ("leader-election-lock", "leaderElection: {resourceLock: endpoints}\n",
     ['leaderElection.resourceLock: Invalid value: "endpoints": resourceLock value must be "leases"']),
    ("leader-election-durations", "leaderElection: {leaseDuration: 5s, renewDeadline: 10s}\n",
     ['leaderElection.leaseDuration: Invalid value: "10s": must be greater than `RenewDeadline`']),
    ("client-burst", "clientConnection: {burst: -1}\n",
     ["clientConnection.burst: Invalid value: -1: must be non-negative"]),
    ("extenders",
     "extenders:\n- {urlPrefix: a, prioritizeVerb: p, bindVerb: b}\n"
     "- {urlPrefix: b, bindVerb: b, managedResources: [{name: cpu}, {name: example.com/x}, {name: example.com/x}]}\n",
     ['extenders[0].urlPrefix: Invalid value: "a": must be an http:// or https:// URL (pysched POSTs '
      '<urlPrefix>/<verb> to it)',
      "extenders[0].weight: Invalid value: 0: must have a positive weight applied to it",
      'extenders[1].urlPrefix: Invalid value: "b": must be an http:// or https:// URL (pysched POSTs '
      '<urlPrefix>/<verb> to it)',
      'extenders[1].managedResources[0].name: Invalid value: "cpu": is an invalid extended resource name',
      'extenders[1].managedResources[2].name: Invalid value: "example.com/x": duplicate extender managed resource '
      'name',
      'extenders: Invalid value: "found 2 extenders implementing bind": only one extender can implement bind']),
    ("several-at-once", "parallelism: -1\npercentageOfNodesToScore: 200\nprofiles:\n- schedulerName: a\n"
     "  pluginConfig:\n  - name: DefaultPreemption\n    args: {minCandidateNodesPercentage: 101}\n",
     ["parallelism: Invalid value: -1: should be an integer value greater than zero",
      "profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: 101: not in valid range "
      "[0, 100]",
      "percentageOfNodesToScore: Invalid value: 200: not in valid range [0-100]"]),
]


@pytest.mark.parametrize(("body", "expected"), [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_errors(body: str, expected: list[str]) -> None:
    with pytest.raises(ConfigError) as info:
        build(body, OOT_REGISTRY)
    assert [str(e) for e in pa.flatten(info.value)] == expected
    assert isinstance(info.value, ConfigErrors) == (len(expected) > 1)


TYPE_META: list[tuple[str, Any, str]] = [
    ("v1beta3", {"apiVersion": "kubescheduler.config.k8s.io/v1beta3", "kind": "KubeSchedulerConfiguration"},
     "apiVersion: kubescheduler.config.k8s.io/v1beta3 is no longer supported by kube-scheduler v1.34; migrate "
     "the configuration to kubescheduler.config.k8s.io/v1 (https://kubernetes.io/docs/reference/scheduling/config/)"),
    ("v1beta2", {"apiVersion": "kubescheduler.config.k8s.io/v1beta2", "kind": "KubeSchedulerConfiguration"},
     "apiVersion: kubescheduler.config.k8s.io/v1beta2 is no longer supported by kube-scheduler v1.34; migrate "
     "the configuration to kubescheduler.config.k8s.io/v1 (https://kubernetes.io/docs/reference/scheduling/config/)"),
    ("other-group", {"apiVersion": "v1", "kind": "ConfigMap"},
     'apiVersion: unsupported apiVersion "v1": kube-scheduler v1.34 reads kubescheduler.config.k8s.io/v1 '
     "KubeSchedulerConfiguration"),
    ("missing-api-version", {"kind": "KubeSchedulerConfiguration"},
     "apiVersion: Object 'apiVersion' is missing: set apiVersion: kubescheduler.config.k8s.io/v1"),
    ("missing-kind", {"apiVersion": "kubescheduler.config.k8s.io/v1"},
     "kind: Object 'Kind' is missing: set kind: KubeSchedulerConfiguration"),
    ("wrong-kind", {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "DefaultPreemptionArgs"},
     'kind: no kind "DefaultPreemptionArgs" is registered for version "kubescheduler.config.k8s.io/v1"; expected '
     "KubeSchedulerConfiguration"),
    ("not-an-object", ["a"], "json: cannot unmarshal array into Go value of type KubeSchedulerConfiguration"),
]


@pytest.mark.parametrize(("raw", "expected"), [t[1:] for t in TYPE_META], ids=[t[0] for t in TYPE_META])
def test_type_meta(raw: Any, expected: str) -> None:
    with pytest.raises(ConfigError) as info:
        build_config(raw, REGISTRY)
    assert str(info.value) == expected


# --------------------------------------------------------------------------------------------------
# Files

def test_load_config_none_is_default() -> None:
    cfg = load_config(None, REGISTRY)
    assert scores(cfg) == DEFAULT_SCORES and cfg.source == "default"


def test_load_config_yaml_and_json(tmp_path: Path) -> None:
    raw = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "percentageOfNodesToScore": 30}
    for name, text in (("c.yaml", "---\n" + yaml.safe_dump(raw)), ("c.json", json.dumps(raw))):
        path = tmp_path / name
        path.write_text(text)
        cfg = load_config(str(path), REGISTRY)
        assert cfg.percentage_of_nodes_to_score == 30 and cfg.source == str(path)


FILE_ERRORS: list[tuple[str, str | None, str]] = [
    ("missing-file", None, "{p}: the scheduler configuration: cannot read: No such file or directory"),
    ("empty-file", "", "{p}: the file is empty; expected a KubeSchedulerConfiguration "
                       "(kubescheduler.config.k8s.io/v1)"),
    ("yaml-syntax", HEADER + "profiles:\n  - a\n - b\n",
     "{p}:5: invalid YAML: while parsing a block mapping, did not find expected key (column 2)"),
    ("duplicate-key", HEADER + "parallelism: 1\nparallelism: 2\n",
     '{p}:4: document 1: mapping key "parallelism" already defined at line 3: a key may appear once in a mapping '
     '(kubectl refuses the file)'),
    ("two-documents", HEADER + "---\n" + HEADER,
     "{p}: expected one YAML document (a KubeSchedulerConfiguration), found 2"),
    ("validation-names-file", HEADER + "parallelism: 0\n",
     "{p}: parallelism: Invalid value: 0: should be an integer value greater than zero"),
]


@pytest.mark.parametrize(("text", "expected"), [f[1:] for f in FILE_ERRORS], ids=[f[0] for f in FILE_ERRORS])
def test_load_config_errors(tmp_path: Path, text: str | None, expected: str) -> None:
    path = tmp_path / "sched.yaml"
    if text is not None:
        path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(str(path), REGISTRY)
    assert str(info.value) == expected.format(p=path)
    assert info.value.file == str(path)


def test_load_config_several_errors_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "sched.yaml"
    path.write_text(HEADER + "parallelism: 0\npercentageOfNodesToScore: 101\n")
    with pytest.raises(ConfigErrors) as info:
        load_config(str(path), REGISTRY)
    assert [e.file for e in info.value.errors] == [str(path), str(path)]


# --------------------------------------------------------------------------------------------------
# The conformance configurations: every one loads, and agrees with what the real scheduler recorded

_HERE = Path(__file__).parent / "conformance" / "scenarios"
_SHARED = Path("/work/shared/conformance/scenarios")
_DIR = _HERE if any(_HERE.glob("*.config.yaml")) else _SHARED
CONFORMANCE = sorted(_DIR.glob("*.config.yaml"))


@pytest.mark.skipif(not CONFORMANCE, reason="no conformance configurations available")
@pytest.mark.parametrize("path", CONFORMANCE, ids=[p.name.removesuffix(".config.yaml") for p in CONFORMANCE])
def test_conformance_config_loads(path: Path) -> None:
    cfg = load_config(str(path), REGISTRY)
    expected = _expected(path)
    if expected is None:
        return
    assert [p.scheduler_name for p in cfg.profiles] == expected.get("profiles")
    _check_against_trace(cfg, expected)


def _expected(path: Path) -> dict | None:
    for folder in (path.parent, _SHARED):
        trace = folder / path.name.replace(".config.yaml", ".expected.json.gz")
        if trace.exists():
            with gzip.open(trace, "rt") as fh:
                return json.load(fh)
    return None


def _check_against_trace(cfg: SchedulerConfig, expected: dict) -> None:
    """Filter plugins match filter_all; weighted scores fit the configured weights."""
    filters = {r.name for p in cfg.profiles for r in p.enabled("filter")}
    weights: dict[str, set[int]] = {}
    for prof in cfg.profiles:
        for ref in prof.enabled("score"):
            weights.setdefault(ref.name, set()).add(ref.weight)
    for cycle in expected["cycles"]:
        for per_plugin in (cycle.get("filter_all") or {}).values():
            assert set(per_plugin) == filters
        for node in (cycle.get("scores") or {}).values():
            for plugin, value in node["plugins"].items():
                assert plugin in weights
                assert any(value % w == 0 and 0 <= value <= 100 * w for w in weights[plugin])


CONFORMANCE_EXPECTATIONS: list[tuple[str, int, list[tuple[str, int]] | None, int | None]] = [
    ("030-edge-balanced", 0, [("NodeResourcesBalancedAllocation", 5), ("NodeResourcesFit", 2),
                              ("NodeAffinity", 2), ("VolumeBinding", 1), ("PodTopologySpread", 2),
                              ("InterPodAffinity", 2), ("ImageLocality", 1)], None),
    ("092-edge-schedule_one", 0, DEFAULT_SCORES[:-2], 50),
    ("118-config", 1, [("NodeResourcesFit", 2), ("NodeAffinity", 20), ("InterPodAffinity", 20),
                       ("TaintToleration", 3), ("VolumeBinding", 1), ("PodTopologySpread", 2),
                       ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1)], None),
]


@pytest.mark.parametrize(("name", "profile", "expected_scores", "percentage"),
                         CONFORMANCE_EXPECTATIONS, ids=[c[0] for c in CONFORMANCE_EXPECTATIONS])
def test_conformance_config_details(name: str, profile: int, expected_scores: list[tuple[str, int]] | None,
                                    percentage: int | None) -> None:
    path = _DIR / f"{name}.config.yaml"
    if not path.exists():
        pytest.skip(f"{path} not available")
    cfg = load_config(str(path), REGISTRY)
    assert scores(cfg, profile) == expected_scores
    assert cfg.profiles[profile].percentage_of_nodes_to_score == percentage


def test_conformance_118_args_per_profile() -> None:
    path = _DIR / "118-config.config.yaml"
    if not path.exists():
        pytest.skip(f"{path} not available")
    cfg = load_config(str(path), REGISTRY)
    assert cfg.profiles[0].plugin_args["NodeResourcesFit"] == NodeResourcesFitArgs()
    assert cfg.profiles[1].plugin_args["NodeResourcesFit"].scoring_strategy == ScoringStrategy(
        "MostAllocated", [ResourceSpec("cpu", 3), ResourceSpec("memory", 1)], [])
