"""KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1): decoding, v1 defaulting, validation.

The result is a ``SchedulerConfig`` whose profiles list, per extension point, the enabled plugins in
the order kube-scheduler runs them (MultiPoint expanded, defaults merged) with their score weights and
typed arguments.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import TYPE_CHECKING, Any

from pysched.errors import ConfigError
from pysched.framework import plugin_args as pa
from pysched.framework.extender import ExtenderConfig, decode_extender, extender_errors
from pysched.framework.interface import EXTENSION_POINTS, MAX_NODE_SCORE
from pysched.framework.plugin_args import (
    API_GROUP,
    API_VERSION,
    ConfigErrors,
    as_list,
    as_mapping,
    check_fields,
    child,
    did_you_mean,
    duplicate,
    get_bool,
    get_duration,
    get_float,
    get_int,
    get_str,
    go_quote,
    index,
    invalid,
    plain,
    raise_all,
    required,
)
from pysched.lazyclass import dataclass
from pysched.model.resources import is_extended
from pysched.snapshot import reader

if TYPE_CHECKING:
    from pysched.framework.registry import PluginSpec, Registry

EXTENSION_POINT_KEYS = tuple(EXTENSION_POINTS)  # in upstream's order


@dataclass(slots=True)
class PluginRef:
    name: str
    weight: int = 0  # only meaningful at the score point; 0 elsewhere


@dataclass(slots=True)
class ProfileConfig:
    scheduler_name: str
    # extension point key (EXTENSION_POINT_KEYS) -> enabled plugins in run order
    plugins: dict[str, list[PluginRef]] = field(default_factory=dict)
    # plugin name -> typed args (from pysched.framework.plugin_args) for every plugin of the profile
    plugin_args: dict[str, Any] = field(default_factory=dict)
    percentage_of_nodes_to_score: int | None = None

    def enabled(self, point: str) -> list[PluginRef]:
        return self.plugins.get(point, [])

    def all_plugin_names(self) -> list[str]:
        seen: dict[str, None] = {}
        for point in EXTENSION_POINT_KEYS:
            for ref in self.plugins.get(point, []):
                seen.setdefault(ref.name, None)
        return list(seen)


@dataclass(slots=True)
class SchedulerConfig:
    profiles: list[ProfileConfig]
    percentage_of_nodes_to_score: int = 0
    parallelism: int = 16
    extenders: list[ExtenderConfig] = field(default_factory=list)
    source: str = "default"
    # the defaulted options the simulation does not act on, for ``pysched config show``
    options: dict[str, Any] = field(default_factory=dict)

    def profile(self, scheduler_name: str) -> ProfileConfig | None:
        for p in self.profiles:
            if p.scheduler_name == scheduler_name:
                return p
        return None


# ==================================================================================================
# Constants

DEFAULT_SCHEDULER_NAME = "default-scheduler"
KIND = "KubeSchedulerConfiguration"
MULTI_POINT = "multiPoint"
PLUGIN_SET_KEYS = (*EXTENSION_POINT_KEYS, MULTI_POINT)
MAX_TOTAL_SCORE = 2**63 - 1
REMOVED_API_VERSIONS = ("v1alpha1", "v1alpha2", "v1beta1", "v1beta2", "v1beta3")
#: plugins removed from the v1 API (upstream ``invalidPluginsByVersion``)
REMOVED_PLUGINS = ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")

#: the v1.34 MultiPoint defaults, in order (weight 0 = none given); DynamicResources is in because the
#: DynamicResourceAllocation gate is on, just before DefaultPreemption
_DEFAULT_MULTI_POINT: tuple[tuple[str, int], ...] = (
    ("SchedulingGates", 0), ("PrioritySort", 0), ("NodeUnschedulable", 0), ("NodeName", 0),
    ("TaintToleration", 3), ("NodeAffinity", 2), ("NodePorts", 0), ("NodeResourcesFit", 1),
    ("VolumeRestrictions", 0), ("NodeVolumeLimits", 0), ("VolumeBinding", 0), ("VolumeZone", 0),
    ("PodTopologySpread", 2), ("InterPodAffinity", 2), ("DynamicResources", 0), ("DefaultPreemption", 0),
    ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1), ("DefaultBinder", 0),
)

#: the order in which upstream's framework builds the extension points (``getExtensionPoints``)
_FRAMEWORK_ORDER = ("preFilter", "filter", "postFilter", "reserve", "preScore", "score", "preBind", "bind",
                    "postBind", "permit", "preEnqueue", "queueSort")

_TOP_FIELDS = ("apiVersion", "kind", "parallelism", "leaderElection", "clientConnection", "enableProfiling",
               "enableContentionProfiling", "percentageOfNodesToScore", "podInitialBackoffSeconds",
               "podMaxBackoffSeconds", "profiles", "extenders", "delayCacheUntilActive")
_PROFILE_FIELDS = ("schedulerName", "percentageOfNodesToScore", "plugins", "pluginConfig")
_LEADER_FIELDS = ("leaderElect", "leaseDuration", "renewDeadline", "retryPeriod", "resourceLock",
                  "resourceName", "resourceNamespace")
_CLIENT_FIELDS = ("kubeconfig", "acceptContentTypes", "contentType", "qps", "burst")
#: top-level fields of older API versions that v1 refuses, with what to do instead
_REMOVED_FIELDS = {
    "healthzBindAddress": "serve health checks with kube-scheduler's --bind-address/--secure-port flags",
    "metricsBindAddress": "serve metrics with kube-scheduler's --bind-address/--secure-port flags",
}


def default_plugins() -> list[PluginRef]:
    """The v1.34 MultiPoint default plugins in order, with their weights (0 = none given)."""
    return [PluginRef(name, weight) for name, weight in _DEFAULT_MULTI_POINT]


def go_plugin_type(point: str) -> str:
    """Upstream's interface name of an extension point, e.g. ``score`` → ``ScorePlugin``."""
    return point[0].upper() + point[1:] + "Plugin"


# ==================================================================================================
# The decoded (not yet defaulted) configuration


@dataclass(slots=True)
class _Plugin:
    name: str
    weight: int | None
    path: str = ""  # where the user wrote it; "" for a default


@dataclass(slots=True)
class _PluginSet:
    enabled: list[_Plugin] = field(default_factory=list)
    disabled: list[str] = field(default_factory=list)


@dataclass(slots=True)
class _PluginConfig:
    name: str
    args: Any
    path: str


@dataclass(slots=True)
class _Profile:
    path: str
    scheduler_name: str | None = None
    percentage: int | None = None
    plugins: dict[str, _PluginSet] | None = None
    plugin_config: list[_PluginConfig] = field(default_factory=list)


@dataclass(slots=True)
class _LeaderElection:
    leader_elect: bool = True
    lease_ns: int = 15 * 10**9
    renew_ns: int = 10 * 10**9
    retry_ns: int = 2 * 10**9
    resource_lock: str = "leases"
    resource_name: str = "kube-scheduler"
    resource_namespace: str = "kube-system"


@dataclass(slots=True)
class _Raw:
    parallelism: int = 16
    percentage: int = 0
    initial_backoff: int = 1
    max_backoff: int = 10
    burst: int = 100
    leader: _LeaderElection = field(default_factory=_LeaderElection)
    profiles: list[_Profile] = field(default_factory=list)
    extenders: list[ExtenderConfig] = field(default_factory=list)


# ==================================================================================================
# Strict decoding


def _check_type_meta(body: Mapping[str, Any]) -> None:
    api_version = get_str(body, "apiVersion", "")
    kind = get_str(body, "kind", "")
    if not api_version:
        raise ConfigError(f"Object 'apiVersion' is missing: set apiVersion: {API_VERSION}", field="apiVersion")
    group, _, version = api_version.rpartition("/")
    if group == API_GROUP and version in REMOVED_API_VERSIONS:
        raise ConfigError(f"{api_version} is no longer supported by kube-scheduler v1.34; migrate the "
                          f"configuration to {API_VERSION} (https://kubernetes.io/docs/reference/scheduling/config/)",
                          field="apiVersion")
    if api_version != API_VERSION:
        raise ConfigError(f"unsupported apiVersion {go_quote(api_version)}: kube-scheduler v1.34 reads "
                          f"{API_VERSION} {KIND}", field="apiVersion")
    if not kind:
        raise ConfigError(f"Object 'Kind' is missing: set kind: {KIND}", field="kind")
    if kind != KIND:
        raise ConfigError(f"no kind {go_quote(kind)} is registered for version {go_quote(API_VERSION)}; "
                          f"expected {KIND}", field="kind")


def _decode_plugin_set(raw: Any, path: str) -> _PluginSet:
    body = as_mapping(raw, path, "PluginSet")
    check_fields(body, ("enabled", "disabled"), path)
    out = _PluginSet()
    for key in ("enabled", "disabled"):
        lpath = child(path, key)
        for i, item in enumerate(as_list(body.get(key), lpath) or []):
            p = index(lpath, i)
            entry = as_mapping(item, p, "Plugin")
            check_fields(entry, ("name", "weight"), p)
            name = get_str(entry, "name", p) or ""
            if key == "enabled":
                out.enabled.append(_Plugin(name, get_int(entry, "weight", p), p))
            else:
                get_int(entry, "weight", p)
                out.disabled.append(name)
    return out


def _decode_plugins(raw: Any, path: str) -> dict[str, _PluginSet] | None:
    if raw is None:
        return None
    body = as_mapping(raw, path, "Plugins")
    check_fields(body, PLUGIN_SET_KEYS, path)
    return {key: _decode_plugin_set(body.get(key), child(path, key)) for key in PLUGIN_SET_KEYS}


def _decode_plugin_config(raw: Any, path: str) -> list[_PluginConfig]:
    out = []
    for i, item in enumerate(as_list(raw, path) or []):
        p = index(path, i)
        entry = as_mapping(item, p, "PluginConfig")
        check_fields(entry, ("name", "args"), p)
        out.append(_PluginConfig(get_str(entry, "name", p) or "", entry.get("args"), p))
    return out


def _decode_profile(raw: Any, path: str) -> _Profile:
    body = as_mapping(raw, path, "KubeSchedulerProfile")
    check_fields(body, _PROFILE_FIELDS, path)
    return _Profile(path, get_str(body, "schedulerName", path), get_int(body, "percentageOfNodesToScore", path),
                    _decode_plugins(body.get("plugins"), child(path, "plugins")),
                    _decode_plugin_config(body.get("pluginConfig"), child(path, "pluginConfig")))


def _decode_leader_election(raw: Any, path: str) -> _LeaderElection:
    body = as_mapping(raw, path, "LeaderElectionConfiguration")
    check_fields(body, _LEADER_FIELDS, path)
    out = _LeaderElection()
    elect = get_bool(body, "leaderElect", path)
    out.leader_elect = True if elect is None else elect
    out.lease_ns = get_duration(body, "leaseDuration", path) or out.lease_ns
    out.renew_ns = get_duration(body, "renewDeadline", path) or out.renew_ns
    out.retry_ns = get_duration(body, "retryPeriod", path) or out.retry_ns
    out.resource_lock = get_str(body, "resourceLock", path) or out.resource_lock
    out.resource_name = get_str(body, "resourceName", path) or out.resource_name
    out.resource_namespace = get_str(body, "resourceNamespace", path) or out.resource_namespace
    return out


def _decode_client_connection(raw: Any, path: str) -> int:
    """Checks the fields; returns the defaulted burst (the only field validated)."""
    body = as_mapping(raw, path, "ClientConnectionConfiguration")
    check_fields(body, _CLIENT_FIELDS, path)
    for key in ("kubeconfig", "acceptContentTypes", "contentType"):
        get_str(body, key, path)
    get_float(body, "qps", path)
    return get_int(body, "burst", path) or 100


def _decode(raw: Any) -> _Raw:
    body = as_mapping(raw, "", KIND)
    _check_type_meta(body)
    for key, instead in _REMOVED_FIELDS.items():
        if key in body:
            raise ConfigError(f"strict decoding error: unknown field {go_quote(key)} (it is not part of "
                              f"{API_VERSION}: {instead})")
    check_fields(body, _TOP_FIELDS, "")
    for key in ("enableProfiling", "enableContentionProfiling", "delayCacheUntilActive"):
        get_bool(body, key, "")
    out = _Raw()
    parallelism = get_int(body, "parallelism", "")
    out.parallelism = 16 if parallelism is None else parallelism
    out.percentage = get_int(body, "percentageOfNodesToScore", "") or 0
    initial = get_int(body, "podInitialBackoffSeconds", "", bits=64)
    out.initial_backoff = 1 if initial is None else initial
    maximum = get_int(body, "podMaxBackoffSeconds", "", bits=64)
    out.max_backoff = 10 if maximum is None else maximum
    out.leader = _decode_leader_election(body.get("leaderElection"), "leaderElection")
    out.burst = _decode_client_connection(body.get("clientConnection"), "clientConnection")
    out.profiles = [_decode_profile(item, index("profiles", i))
                    for i, item in enumerate(as_list(body.get("profiles"), "profiles") or [])]
    out.extenders = [decode_extender(item, index("extenders", i))
                     for i, item in enumerate(as_list(body.get("extenders"), "extenders") or [])]
    return out


# ==================================================================================================
# v1 defaulting: profiles, scheduler names, plugins merged into the defaults (mergePlugins)


def _default_plugin_sets() -> dict[str, _PluginSet]:
    sets = {key: _PluginSet() for key in PLUGIN_SET_KEYS}
    sets[MULTI_POINT].enabled = [_Plugin(name, weight or None) for name, weight in _DEFAULT_MULTI_POINT]
    return sets


def _merge_plugin_set(default: _PluginSet, custom: _PluginSet) -> _PluginSet:
    """Upstream ``mergePluginSet``: a custom plugin named like a default replaces it in place;
    ``disabled`` drops defaults (``*`` drops them all); other custom plugins are appended."""
    disabled = list(custom.disabled) + list(default.disabled)
    disabled_set = set(disabled)
    custom_index = {p.name: i for i, p in enumerate(custom.enabled)}  # the last one wins, as a Go map
    replaced: set[int] = set()
    enabled: list[_Plugin] = []
    if "*" not in disabled_set:
        for plugin in default.enabled:
            if plugin.name in disabled_set:
                continue
            i = custom_index.get(plugin.name)
            if i is not None:
                plugin = custom.enabled[i]
                replaced.add(i)
            enabled.append(plugin)
    enabled.extend(p for i, p in enumerate(custom.enabled) if i not in replaced)
    return _PluginSet(enabled, disabled)


def _merge_plugins(custom: dict[str, _PluginSet] | None) -> dict[str, _PluginSet]:
    defaults = _default_plugin_sets()
    if custom is None:
        return defaults
    return {key: _merge_plugin_set(defaults[key], custom.get(key, _PluginSet())) for key in PLUGIN_SET_KEYS}


def _apply_defaults(cfg: _Raw) -> None:
    if not cfg.profiles:
        cfg.profiles.append(_Profile(index("profiles", 0)))
    if len(cfg.profiles) == 1 and cfg.profiles[0].scheduler_name is None:
        cfg.profiles[0].scheduler_name = DEFAULT_SCHEDULER_NAME
    for prof in cfg.profiles:
        prof.plugins = _merge_plugins(prof.plugins)


# ==================================================================================================
# Validation (upstream ValidateKubeSchedulerConfiguration); all errors are reported together


def _plugins(prof: _Profile) -> dict[str, _PluginSet]:
    assert prof.plugins is not None  # merged by _apply_defaults
    return prof.plugins


def _validate_percentage(value: int | None, path: str) -> list[ConfigError]:
    if value is not None and not 0 <= value <= 100:
        return [invalid(path, value, "not in valid range [0-100]")]
    return []


def _duration_value(ns: int) -> str:
    return pa.format_go_duration(ns)


def _validate_leader_election(le: _LeaderElection, burst: int) -> list[ConfigError]:
    errs = []
    if burst < 0:
        errs.append(invalid("clientConnection.burst", burst, "must be non-negative"))
    if not le.leader_elect:
        return errs
    path = "leaderElection"
    for key, ns in (("leaseDuration", le.lease_ns), ("renewDeadline", le.renew_ns), ("retryPeriod", le.retry_ns)):
        if ns <= 0:
            errs.append(invalid(child(path, key), _duration_value(ns), "must be greater than zero"))
    if le.lease_ns <= le.renew_ns:
        errs.append(invalid(child(path, "leaseDuration"), _duration_value(le.renew_ns),
                            "must be greater than `RenewDeadline`"))
    if le.resource_lock != "leases":
        errs.append(invalid(child(path, "resourceLock"), le.resource_lock, 'resourceLock value must be "leases"'))
    return errs


def _removed_plugin_detail() -> str:
    return f"was invalid in version {go_quote(API_VERSION)} (KubeSchedulerConfiguration is version {go_quote(API_VERSION)})"


def _validate_removed_plugins(prof: _Profile) -> list[ConfigError]:
    errs = []
    for point in EXTENSION_POINT_KEYS:
        for i, plugin in enumerate(_plugins(prof)[point].enabled):
            if plugin.name in REMOVED_PLUGINS:
                path = index(child(child(child(prof.path, "plugins"), point), "enabled"), i)
                errs.append(invalid(path, plugin.name, _removed_plugin_detail()))
    return errs


def _decode_args(entry: _PluginConfig, registry: Registry) -> tuple[Any, list[ConfigError]]:
    """Typed args of one pluginConfig entry and their validation errors; decoding errors are raised."""
    path = child(entry.path, "args")
    parser = pa.PARSERS.get(entry.name)
    if parser is not None:
        return parser(entry.args, path)
    return _out_of_tree_args(registry.get(entry.name), entry.args, path), []


def _out_of_tree_args(spec: PluginSpec | None, raw: Any, path: str) -> Any:
    """Args of a plugin without an in-tree decoder: its own decoder's result, else the raw args
    (in-tree plugins without args ignore them, as upstream does)."""
    if spec is None:
        return None
    if spec.decode_args is None:
        return plain(raw) if raw is not None and spec.source != "in-tree" else None
    try:
        return spec.decode_args(raw)
    except ConfigError as e:
        raise _refield(e, path) from None


def _refield(err: ConfigError, prefix: str) -> ConfigError:
    if isinstance(err, ConfigErrors):
        return ConfigErrors([_refield(e, prefix) for e in err.errors])
    where = child(prefix, err.field) if err.field else prefix
    return ConfigError(err.detail, file=err.file, field=where or None, line=err.line)


def _validate_plugin_config(prof: _Profile, registry: Registry,
                            decoded: dict[str, tuple[Any, list[ConfigError]]]) -> list[ConfigError]:
    """Duplicates, removed plugins and each entry's args (NodeResourcesFit's args are checked only when
    the plugin is built: upstream's validation table names it ``NodeResourcesFitArgs`` by mistake)."""
    errs: list[ConfigError] = []
    seen: set[str] = set()
    for entry in prof.plugin_config:
        if entry.name in seen:
            errs.append(duplicate(entry.path, entry.name))
        seen.add(entry.name)
        if entry.name in REMOVED_PLUGINS:
            errs.append(invalid(entry.path, entry.name, _removed_plugin_detail()))
            continue
        try:
            args, arg_errs = _decode_args(entry, registry)
        except ConfigError as e:
            errs.extend(pa.flatten(e))
            continue
        decoded.setdefault(entry.name, (args, arg_errs))
        if entry.name != "NodeResourcesFit":
            errs.extend(arg_errs)
    return errs


def _validate_profile(prof: _Profile, registry: Registry,
                      decoded: dict[str, tuple[Any, list[ConfigError]]]) -> list[ConfigError]:
    errs: list[ConfigError] = []
    if not prof.scheduler_name:
        errs.append(required(child(prof.path, "schedulerName")))
    errs.extend(_validate_percentage(prof.percentage, child(prof.path, "percentageOfNodesToScore")))
    errs.extend(_validate_removed_plugins(prof))
    errs.extend(_validate_plugin_config(prof, registry, decoded))
    return errs


def _queue_sort_key(prof: _Profile) -> tuple:
    qs = _plugins(prof)["queueSort"]
    return tuple((p.name, p.weight or 0) for p in qs.enabled), tuple(qs.disabled)


def _queue_sort_json(prof: _Profile) -> dict:
    qs = _plugins(prof)["queueSort"]
    return {"Enabled": [{"Name": p.name, "Weight": p.weight or 0} for p in qs.enabled] or None,
            "Disabled": [{"Name": n, "Weight": 0} for n in qs.disabled] or None}


def _validate_common_queue_sort(profiles: list[_Profile]) -> list[ConfigError]:
    """Upstream ``validateCommonQueueSort``: the queueSort plugin set (and its args) of every profile
    must equal the first profile's."""
    errs: list[ConfigError] = []
    first = profiles[0]
    first_qs = _plugins(first)["queueSort"].enabled
    if len(first_qs) > 1:
        errs.append(invalid(child(child(first.path, "plugins"), "queueSort.Enabled"), len(first_qs),
                            "only one queue sort plugin can be enabled"))
    name = first_qs[0].name if first_qs else ""
    first_args = next((e.args for e in first.plugin_config if name and e.name == name), None)
    for prof in profiles[1:]:
        if _queue_sort_key(prof) != _queue_sort_key(first):
            errs.append(invalid(child(child(prof.path, "plugins"), "queueSort"), _queue_sort_json(prof),
                                "must be the same for all profiles"))
        for entry in prof.plugin_config:
            if name and entry.name == name and entry.args != first_args:
                errs.append(invalid(child(child(prof.path, "pluginConfig"), "args"), entry.args,
                                    "queueSort must be the same for all profiles"))
    return errs


def _validate_extenders(extenders: list[ExtenderConfig]) -> list[ConfigError]:
    errs: list[ConfigError] = []
    binders = 0
    managed: set[str] = set()
    for i, ext in enumerate(extenders):
        path = index("extenders", i)
        errs.extend(extender_errors(ext, path))
        if ext.prioritize_verb and ext.weight <= 0:
            errs.append(invalid(child(path, "weight"), ext.weight, "must have a positive weight applied to it"))
        if ext.bind_verb:
            binders += 1
        for j, res in enumerate(ext.managed_resources):
            name = res.name
            mpath = child(index(child(path, "managedResources"), j), "name")
            msgs = pa.qualified_name_errors(name)
            errs.extend(invalid(mpath, name, m) for m in msgs)
            if not msgs and not is_extended(name):
                errs.append(invalid(mpath, name, "is an invalid extended resource name"))
            if name in managed:
                errs.append(invalid(mpath, name, "duplicate extender managed resource name"))
            managed.add(name)
    if binders > 1:
        errs.append(invalid("extenders", f"found {binders} extenders implementing bind",
                            "only one extender can implement bind"))
    return errs


def _validate(cfg: _Raw, registry: Registry) -> list[dict[str, tuple[Any, list[ConfigError]]]]:
    """Raises every validation error together; returns each profile's decoded pluginConfig args."""
    errs = _validate_leader_election(cfg.leader, cfg.burst)
    if cfg.parallelism <= 0:
        errs.append(invalid("parallelism", cfg.parallelism, "should be an integer value greater than zero"))
    decoded: list[dict[str, tuple[Any, list[ConfigError]]]] = []
    first_with_name: dict[str, str] = {}
    for prof in cfg.profiles:
        decoded.append({})
        errs.extend(_validate_profile(prof, registry, decoded[-1]))
        name = prof.scheduler_name or ""
        if name in first_with_name:
            errs.append(pa.field_error(child(prof.path, "schedulerName"),
                                f"Duplicate value: {go_quote(name)} (already used by {first_with_name[name]})"))
        first_with_name.setdefault(name, child(prof.path, "schedulerName"))
    errs.extend(_validate_common_queue_sort(cfg.profiles))
    errs.extend(_validate_percentage(cfg.percentage, "percentageOfNodesToScore"))
    if cfg.initial_backoff <= 0:
        errs.append(invalid("podInitialBackoffSeconds", cfg.initial_backoff, "must be greater than 0"))
    if cfg.max_backoff < cfg.initial_backoff:
        errs.append(invalid("podMaxBackoffSeconds", cfg.max_backoff,
                            "must be greater than or equal to PodInitialBackoffSeconds"))
    errs.extend(_validate_extenders(cfg.extenders))
    raise_all(errs)
    return decoded


# ==================================================================================================
# Building each profile's framework view (upstream NewFramework): plugin lists per point, weights, args


class _ProfileBuilder:
    """One profile: checks plugin names per point, expands MultiPoint and assigns score weights.
    Errors stop at the first one, as NewFramework does."""

    def __init__(self, prof: _Profile, registry: Registry, decoded: dict[str, tuple[Any, list[ConfigError]]]):
        self.prof = prof
        self.sets = _plugins(prof)
        self.registry = registry
        self.decoded = decoded
        self.name = prof.scheduler_name or ""
        self._points: dict[str, list[str]] = {}

    def fail(self, detail: str, path: str = "") -> ConfigError:
        return ConfigError(f"creating profile for scheduler name {self.name}: {detail}",
                           field=path or child(self.prof.path, "plugins"))

    def points_of(self, name: str) -> list[str]:
        if name not in self._points:
            spec = self.registry.get(name)
            self._points[name] = list(spec.extension_points) if spec is not None else []
        return self._points[name]

    def missing(self, plugin: _Plugin, point: str) -> ConfigError:
        hint = did_you_mean(plugin.name, self.registry.names())
        return self.fail(f"{go_plugin_type(point)} {go_quote(plugin.name)} does not exist{hint}", plugin.path)

    def needed(self) -> list[str]:
        """Every plugin enabled anywhere (upstream ``pluginsNeeded``), in first-seen order."""
        seen: dict[str, None] = {}
        for key in PLUGIN_SET_KEYS:
            for plugin in self.sets[key].enabled:
                seen.setdefault(plugin.name, None)
        return list(seen)

    def plugin_args(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in self.needed():
            if name in self.decoded:
                args, errs = self.decoded[name]
                raise_all(errs)  # only NodeResourcesFit's: checked when the plugin is built
            elif name in pa.PARSERS:
                args = pa.DECODERS[name](None, "")
            else:
                args = _out_of_tree_args(self.registry.get(name), None, "")
            if args is not None:
                out[name] = args
        return out

    def point_list(self, point: str) -> list[str]:
        """Upstream ``updatePluginList``: the plugins configured for one point."""
        names: list[str] = []
        for plugin in self.sets[point].enabled:
            if self.registry.get(plugin.name) is None:
                raise self.missing(plugin, point)
            if point not in self.points_of(plugin.name):
                raise self.fail(f"plugin {go_quote(plugin.name)} does not extend {go_plugin_type(point)} plugin",
                                plugin.path)
            if plugin.name in names:
                raise self.fail(f"plugin {go_quote(plugin.name)} already registered as "
                                f"{go_quote(go_plugin_type(point))}", plugin.path)
            names.append(plugin.name)
        return names

    def expand(self, point: str, specific: list[str]) -> list[str]:
        """Upstream ``expandMultiPointPlugins`` for one point: plugins set at the point itself that
        MultiPoint also names come first, then the other MultiPoint plugins, then the rest."""
        disabled = set(self.sets[point].disabled)
        if "*" in disabled:
            return specific
        overrides: set[str] = set()
        multi: list[str] = []
        for plugin in self.sets[MULTI_POINT].enabled:
            if self.registry.get(plugin.name) is None:
                raise self.missing(plugin, point)
            if point not in self.points_of(plugin.name) or plugin.name in disabled:
                continue
            if plugin.name in specific:
                overrides.add(plugin.name)
                continue
            if plugin.name in multi:
                raise self.fail(f"plugin {go_quote(plugin.name)} already registered as "
                                f"{go_quote(go_plugin_type(point))}", plugin.path)
            multi.append(plugin.name)
        return ([n for n in specific if n in overrides] + multi + [n for n in specific if n not in overrides])

    def score_weights(self) -> dict[str, int]:
        """Upstream ``getScoreWeights``: the score point's own weight wins over MultiPoint's; 0 → 1."""
        weights: dict[str, int] = {}
        total = 0
        for plugin in self.sets["score"].enabled + self.sets[MULTI_POINT].enabled:
            if "score" not in self.points_of(plugin.name) or plugin.name in weights:
                continue
            weight = plugin.weight or 1
            weights[plugin.name] = weight
            if weight * MAX_NODE_SCORE > MAX_TOTAL_SCORE - total:
                raise self.fail("total score of Score plugins could overflow", plugin.path)
            total += weight * MAX_NODE_SCORE
        return weights

    def build(self) -> ProfileConfig:
        args = self.plugin_args()
        lists = {point: self.point_list(point) for point in _FRAMEWORK_ORDER}
        if self.sets[MULTI_POINT].enabled:
            lists = {point: self.expand(point, lists[point]) for point in _FRAMEWORK_ORDER}
        if len(lists["queueSort"]) != 1:
            raise self.fail(f"only one queue sort plugin required for profile with scheduler name "
                            f"{go_quote(self.name)}, but got {len(lists['queueSort'])}")
        if not lists["bind"]:
            raise self.fail(f"at least one bind plugin is needed for profile with scheduler name "
                            f"{go_quote(self.name)}")
        weights = self.score_weights()
        plugins = {point: [PluginRef(n, weights[n] if point == "score" else 0) for n in lists[point]]
                   for point in EXTENSION_POINT_KEYS}
        return ProfileConfig(self.name, plugins, args, self.prof.percentage)


def _check_profile_map(profiles: list[ProfileConfig], raws: list[_Profile]) -> None:
    """Upstream ``profile.NewMap``: every profile must use the first profile's queue sort plugin and args."""
    first = profiles[0].enabled("queueSort")[0].name
    first_args = next((e.args for e in raws[0].plugin_config if e.name == first), None)
    for prof, raw in zip(profiles[1:], raws[1:], strict=True):
        mine = prof.enabled("queueSort")[0].name
        if mine != first:
            raise ConfigError(f"different queue sort plugins for profile {go_quote(prof.scheduler_name)}: "
                              f"{go_quote(mine)}, first: {go_quote(first)}", field=child(raw.path, "plugins"))
        args = next((e.args for e in raw.plugin_config if e.name == mine), None)
        if args != first_args:
            raise ConfigError(f"different queue sort plugin args for profile {go_quote(prof.scheduler_name)}",
                              field=child(raw.path, "pluginConfig"))


# ==================================================================================================
# Public API


def build_config(raw: Mapping[str, Any] | None, registry: Registry, source: str = "default") -> SchedulerConfig:
    """A ``SchedulerConfig`` from a decoded KubeSchedulerConfiguration (``None`` → the v1 defaults).

    Raises ``ConfigError`` (or ``ConfigErrors`` for several validation errors) with kube-scheduler's
    messages and the field path of each problem."""
    if raw is None:
        raw = {"apiVersion": API_VERSION, "kind": KIND}
    cfg = _decode(raw)
    _apply_defaults(cfg)
    decoded = _validate(cfg, registry)
    profiles = [_ProfileBuilder(prof, registry, dec).build() for prof, dec in zip(cfg.profiles, decoded, strict=True)]
    _check_profile_map(profiles, cfg.profiles)
    return SchedulerConfig(profiles, cfg.percentage, cfg.parallelism, cfg.extenders, source, _options(cfg))


def _options(cfg: _Raw) -> dict[str, Any]:
    le = cfg.leader
    return {"podInitialBackoffSeconds": cfg.initial_backoff, "podMaxBackoffSeconds": cfg.max_backoff,
            "leaderElection": {"leaderElect": le.leader_elect, "leaseDuration": pa.format_go_duration(le.lease_ns),
                               "renewDeadline": pa.format_go_duration(le.renew_ns),
                               "retryPeriod": pa.format_go_duration(le.retry_ns), "resourceLock": le.resource_lock,
                               "resourceName": le.resource_name, "resourceNamespace": le.resource_namespace},
            "clientConnectionBurst": cfg.burst}


MAX_CONFIG_BYTES = 16 << 20  # a scheduler configuration is a few KiB; refuse /dev/zero and the like


def _parse_yaml(text: str, file: str) -> Any:
    """The one document of a configuration, read by the bounded reader (duplicate keys, aliases and
    nesting refused there); JSON is YAML."""
    docs = reader.load_yaml_one(text, file, error=ConfigError)
    if not docs:
        raise ConfigError(f"the file is empty; expected a {KIND} ({API_VERSION})", file=file)
    if len(docs) > 1:
        raise ConfigError(f"expected one YAML document (a {KIND}), found {len(docs)}", file=file)
    return docs[0]


def _read_text(path: str) -> str:
    return reader.read_text(path, MAX_CONFIG_BYTES, error=ConfigError, what="the scheduler configuration",
                            raise_hint="", stdin_hint="pipe a KubeSchedulerConfiguration in")


def _with_file(err: ConfigError, file: str) -> ConfigError:
    if isinstance(err, ConfigErrors):
        return ConfigErrors([_with_file(e, file) for e in err.errors])
    return ConfigError(err.detail, file=file, field=err.field, line=err.line)


def load_config(path: str | None, registry: Registry) -> SchedulerConfig:
    """Read a KubeSchedulerConfiguration file (YAML or JSON; ``-`` = stdin); ``None`` → the v1 defaults."""
    if path is None:
        return build_config(None, registry)
    raw = _parse_yaml(_read_text(path), path)
    try:
        return build_config(raw, registry, source=path)
    except ConfigError as e:
        raise _with_file(e, path) from None
