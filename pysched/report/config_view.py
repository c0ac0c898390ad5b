"""``pysched config show``: the effective KubeSchedulerConfiguration with every default filled in.

Written as ``kube-scheduler --write-config-to`` writes a v1 configuration (top-level options, then the
profiles with their plugins and every plugin's defaulted args), with one difference on purpose: each
extension point lists its enabled plugins in run order (MultiPoint expanded, the defaults merged) under
``multiPoint: {disabled: [{name: "*"}]}``, so the file says exactly what runs and reads back to the same
profiles. The options the simulation does not act on are named in ``NOT_MODELLED``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from pysched.framework import plugin_args as pa
from pysched.framework.config import EXTENSION_POINT_KEYS, ProfileConfig, SchedulerConfig

API_VERSION, KIND = "kubescheduler.config.k8s.io/v1", "KubeSchedulerConfiguration"

#: option -> why the simulation does not model it
NOT_MODELLED: dict[str, str] = {
    "podInitialBackoffSeconds": "no clock: a pod still pending gets its second cycle in pass 2, not after a backoff",
    "podMaxBackoffSeconds": "no clock: there is no backoff queue",
    "parallelism": "filters and scores run sequentially (the same decisions)",
    "leaderElection": "one simulated scheduler, no leader election",
    "clientConnection": "no API server is written to; a live cluster is read with its own client settings",
    "enableProfiling": "no debug handlers",
    "enableContentionProfiling": "no debug handlers",
    "profiles[].plugins.permit (waiting)": "a pod still waiting on Permit at the end of a pass is rejected then, "
                                           "not after the plugin's timeout",
    "VolumeBindingArgs.bindTimeoutSeconds": "PreBind completes at once",
    "DynamicResourcesArgs.filterTimeout": "no clock",
}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(w[:1].upper() + w[1:] for w in rest)


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {_camel(f.name): _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def args_json(plugin: str, args: Any) -> dict:
    """A plugin's typed args as their v1 ``<Plugin>Args`` object."""
    out: dict[str, Any] = {"apiVersion": API_VERSION, "kind": f"{plugin}Args"}
    if isinstance(args, pa.NodeResourcesFitArgs):
        strategy: dict[str, Any] = {"type": args.scoring_strategy.type,
                                    "resources": _plain(args.scoring_strategy.resources)}
        if args.scoring_strategy.shape:
            strategy["requestedToCapacityRatio"] = {"shape": _plain(args.scoring_strategy.shape)}
        out.update(scoringStrategy=strategy)
        if args.ignored_resources:
            out["ignoredResources"] = list(args.ignored_resources)
        if args.ignored_resource_groups:
            out["ignoredResourceGroups"] = list(args.ignored_resource_groups)
    elif isinstance(args, pa.NodeAffinityArgs):
        if args.added_affinity is not None:
            out["addedAffinity"] = args.added_affinity
    elif isinstance(args, pa.PodTopologySpreadArgs):
        out["defaultingType"] = args.defaulting_type
        if args.default_constraints:
            out["defaultConstraints"] = list(args.default_constraints)
    elif isinstance(args, pa.VolumeBindingArgs):
        out["bindTimeoutSeconds"] = args.bind_timeout_seconds
        if args.shape:
            out["shape"] = _plain(args.shape)
    elif isinstance(args, pa.DynamicResourcesArgs):
        out["filterTimeout"] = pa.format_go_duration(round(args.filter_timeout_seconds * 10**9))
    elif dataclasses.is_dataclass(args) and not isinstance(args, type):
        out.update(_plain(args))
    elif isinstance(args, dict):
        out.update(args)
    return out


def _profile(p: ProfileConfig) -> dict:
    plugins: dict[str, Any] = {"multiPoint": {"disabled": [{"name": "*"}]}}
    for point in EXTENSION_POINT_KEYS:
        refs = p.enabled(point)
        if refs:
            plugins[point] = {"enabled": [{"name": r.name, "weight": r.weight} if point == "score"
                                          else {"name": r.name} for r in refs]}
    out: dict[str, Any] = {"schedulerName": p.scheduler_name, "plugins": plugins,
                           "pluginConfig": [{"name": name, "args": args_json(name, p.plugin_args[name])}
                                            for name in p.all_plugin_names() if name in p.plugin_args]}
    if p.percentage_of_nodes_to_score is not None:
        out["percentageOfNodesToScore"] = p.percentage_of_nodes_to_score
    return out


def effective_config(cfg: SchedulerConfig, profile: str | None = None) -> dict:
    """The whole configuration, or with ``profile`` only that profile."""
    opts = cfg.options
    out: dict[str, Any] = {
        "apiVersion": API_VERSION, "kind": KIND,
        "parallelism": cfg.parallelism,
        "percentageOfNodesToScore": cfg.percentage_of_nodes_to_score,
        "podInitialBackoffSeconds": opts.get("podInitialBackoffSeconds", 1),
        "podMaxBackoffSeconds": opts.get("podMaxBackoffSeconds", 10),
        "leaderElection": opts.get("leaderElection", {}),
        "clientConnection": {"acceptContentTypes": "", "burst": opts.get("clientConnectionBurst", 100),
                             "contentType": "application/vnd.kubernetes.protobuf", "kubeconfig": "", "qps": 50},
        "enableProfiling": True, "enableContentionProfiling": True,
        "profiles": [_profile(p) for p in cfg.profiles if profile is None or p.scheduler_name == profile],
    }
    if cfg.extenders:
        out["extenders"] = [e.raw for e in cfg.extenders]
    return out


def not_modelled_comment() -> str:
    lines = ["# Effective KubeSchedulerConfiguration (kube-scheduler v1.34 defaults filled in).",
             "# Not modelled by the simulation:"]
    lines += [f"#   {k}: {why}" for k, why in NOT_MODELLED.items()]
    return "\n".join(lines) + "\n"
