"""HTTP scheduler extenders (the ``extenders:`` list of a KubeSchedulerConfiguration).

An extender is a web service kube-scheduler consults by POSTing JSON to ``<urlPrefix>/<verb>``:
``filterVerb`` after the Filter plugins, ``prioritizeVerb`` next to the Score plugins (its 0..10 scores are
multiplied by ``weight`` and by MaxNodeScore / MaxExtenderPriority, then added to the node's total), and
``preemptVerb`` once preemption has found its candidate nodes. The request and response bodies are
upstream's ``k8s.io/kube-scheduler/extender/v1`` types; Go's JSON field names are the struct field names
(``Pod``, ``Nodes``, ``NodeNames``, ``FailedNodes``, ...), and Go matches them case-insensitively when it
decodes a response, so this module does too.

pysched never binds anything: ``bindVerb`` is never called; the scheduler only records which extender
would have bound the pod.
"""

from __future__ import annotations

import datetime as _dt
import json
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field, replace
from typing import TYPE_CHECKING, Any

from pysched.errors import ConfigError
from pysched.framework import plugin_args as pa
from pysched.framework.interface import MAX_EXTENDER_PRIORITY, MAX_NODE_SCORE, NodeToStatus
from pysched.framework.status import Code, Status
from pysched.lazyclass import dataclass

if TYPE_CHECKING:
    import ssl

    from pysched.framework.config import ProfileConfig
    from pysched.model.objects import Pod
    from pysched.snapshot.nodeinfo import NodeInfo

DEFAULT_HTTP_TIMEOUT = 5.0  # seconds (upstream DefaultExtenderTimeout)
SCORE_SCALE = MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY
#: the prefix of an extender's key in traces (scores, statuses, bound_by)
TRACE_PREFIX = "extender:"
_FIT_PLUGIN = "NodeResourcesFit"


class ExtenderError(Exception):
    """A failed call to an extender; the message is the one kube-scheduler would log or report."""


# ==================================================================================================
# Configuration


@dataclass(slots=True)
class ManagedResource:
    name: str
    ignored_by_scheduler: bool = False


@dataclass(slots=True)
class ExtenderTLS:
    insecure: bool = False
    server_name: str = ""
    cert_file: str = ""
    key_file: str = ""
    ca_file: str = ""
    cert_data: bytes = b""
    key_data: bytes = b""
    ca_data: bytes = b""


@dataclass(slots=True)
class ExtenderConfig:
    url_prefix: str
    filter_verb: str = ""
    prioritize_verb: str = ""
    preempt_verb: str = ""
    bind_verb: str = ""
    weight: int = 0
    node_cache_capable: bool = False
    managed_resources: list[ManagedResource] = field(default_factory=list)
    ignorable: bool = False
    http_timeout: float = DEFAULT_HTTP_TIMEOUT  # seconds
    enable_https: bool = False
    tls: ExtenderTLS | None = None
    http_timeout_ns: int = 0  # as configured (0: not set)
    raw: dict[str, Any] = field(default_factory=dict)  # the entry as given, for ``pysched config show``


_FIELDS = ("urlPrefix", "filterVerb", "preemptVerb", "prioritizeVerb", "weight", "bindVerb", "enableHTTPS",
           "tlsConfig", "httpTimeout", "nodeCacheCapable", "managedResources", "ignorable")
TLS_FIELDS = ("insecure", "serverName", "certFile", "keyFile", "caFile", "certData", "keyData", "caData")


def _get_bytes(body: Mapping[str, Any], key: str, path: str) -> bytes:
    """A Go ``[]byte`` field: base64 text in YAML and JSON."""
    text = pa.get_str(body, key, path)
    if not text:
        return b""
    import base64  # (here: only a tlsConfig's *Data fields are base64; a run without them never imports it)
    import binascii

    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise pa.field_error(pa.child(path, key), "illegal base64 data: expected the base64 encoding "
                                                  "of the PEM data") from None


def _decode_tls(raw: Any, path: str) -> ExtenderTLS | None:
    if raw is None:
        return None
    body = pa.as_mapping(raw, path, "ExtenderTLSConfig")
    pa.check_fields(body, TLS_FIELDS, path)
    return ExtenderTLS(
        insecure=bool(pa.get_bool(body, "insecure", path)),
        server_name=pa.get_str(body, "serverName", path) or "",
        cert_file=pa.get_str(body, "certFile", path) or "",
        key_file=pa.get_str(body, "keyFile", path) or "",
        ca_file=pa.get_str(body, "caFile", path) or "",
        cert_data=_get_bytes(body, "certData", path),
        key_data=_get_bytes(body, "keyData", path),
        ca_data=_get_bytes(body, "caData", path),
    )


def _check_url(url: str, path: str) -> None:
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise pa.invalid(pa.child(path, "urlPrefix"), url,
                         "must be an http:// or https:// URL (pysched POSTs <urlPrefix>/<verb> to it)")
    try:
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError as e:
        raise pa.invalid(pa.child(path, "urlPrefix"), url, str(e)) from None


def decode_extender(raw: Any, path: str) -> ExtenderConfig:
    """One ``extenders[i]`` entry, strictly decoded into its type (the first type error raises, as Go's
    strict decoder does); :func:`extender_errors` checks what pysched needs of it."""
    body = pa.as_mapping(raw, path, "Extender")
    pa.check_fields(body, _FIELDS, path)
    verbs = {key: pa.get_str(body, key, path) or ""
             for key in ("urlPrefix", "filterVerb", "preemptVerb", "prioritizeVerb", "bindVerb")}
    flags = {key: bool(pa.get_bool(body, key, path)) for key in ("enableHTTPS", "nodeCacheCapable", "ignorable")}
    weight = pa.get_int(body, "weight", path, bits=64) or 0
    timeout_ns = pa.get_duration(body, "httpTimeout", path) or 0
    tls = _decode_tls(body.get("tlsConfig"), pa.child(path, "tlsConfig"))
    managed = []
    mpath = pa.child(path, "managedResources")
    for i, item in enumerate(pa.as_list(body.get("managedResources"), mpath) or []):
        p = pa.index(mpath, i)
        res = pa.as_mapping(item, p, "ExtenderManagedResource")
        pa.check_fields(res, ("name", "ignoredByScheduler"), p)
        managed.append(ManagedResource(pa.get_str(res, "name", p) or "",
                                       bool(pa.get_bool(res, "ignoredByScheduler", p))))
    return ExtenderConfig(
        url_prefix=verbs["urlPrefix"],
        filter_verb=verbs["filterVerb"],
        prioritize_verb=verbs["prioritizeVerb"],
        preempt_verb=verbs["preemptVerb"],
        bind_verb=verbs["bindVerb"],
        weight=weight,
        node_cache_capable=flags["nodeCacheCapable"],
        managed_resources=managed,
        ignorable=flags["ignorable"],
        http_timeout=timeout_ns / 1e9 if timeout_ns else DEFAULT_HTTP_TIMEOUT,
        http_timeout_ns=timeout_ns,
        enable_https=flags["enableHTTPS"],
        tls=tls,
        raw=pa.plain(body),
    )


def extender_errors(cfg: ExtenderConfig, path: str) -> list[ConfigError]:
    """What pysched needs of a decoded extender before any simulation: an http(s) URL, a timeout that
    ends, TLS settings that load (kube-scheduler builds its transports when it starts, too)."""
    errs: list[ConfigError] = []
    try:
        _check_url(cfg.url_prefix, path)
    except ConfigError as e:
        errs.append(e)
    if cfg.http_timeout_ns < 0:
        errs.append(pa.invalid(pa.child(path, "httpTimeout"), pa.format_go_duration(cfg.http_timeout_ns),
                               "must not be negative (kube-scheduler would wait for the extender forever)"))
    if not errs and urllib.parse.urlsplit(cfg.url_prefix).scheme == "https":
        try:
            from pysched.framework.extender_http import make_ssl_context

            make_ssl_context(cfg, path)
        except ConfigError as e:
            errs.append(e)
    return errs


def decode_extenders(raw: list[Any] | None) -> list[ExtenderConfig]:
    """Every entry of ``extenders``, decoded and checked; errors name the field, e.g. ``extenders[0].urlPrefix``."""
    out = [decode_extender(item, pa.index("extenders", i)) for i, item in enumerate(raw or [])]
    pa.raise_all([e for i, cfg in enumerate(out) for e in extender_errors(cfg, pa.index("extenders", i))])
    return out


# ==================================================================================================
# Transport


def _json_default(value: Any) -> Any:
    """What the YAML loader may leave in a raw object that JSON has no type for."""
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=_dt.UTC)
        return value.astimezone(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    if isinstance(value, _dt.date):
        return value.isoformat()
    if isinstance(value, bytes):
        import base64

        return base64.b64encode(value).decode()
    return str(value)


def _field(obj: Mapping[str, Any], name: str) -> Any:
    """A field of a decoded response, matched as Go does: exactly, else ignoring case."""
    if name in obj:
        return obj[name]
    low = name.lower()
    for key, value in obj.items():
        if isinstance(key, str) and key.lower() == low:
            return value
    return None


# ==================================================================================================
# The extender


@dataclass(slots=True)
class Victims:
    """Upstream ``extenderv1.Victims``: the pods preemption would evict on one node."""

    pods: list[Pod]
    num_pdb_violations: int = 0


@dataclass(slots=True)
class ExtenderFailure:
    role: str  # filter, prioritize or preempt
    verb: str
    pod: str
    message: str
    ignored: bool


class HTTPExtender:
    """Upstream ``HTTPExtender``; every failed call is also kept in ``failures`` for the run's warnings."""

    def __init__(self, cfg: ExtenderConfig, path: str = "",
                 pod_view: Callable[[Pod], Mapping[str, Any]] | None = None) -> None:
        self.config = cfg
        # the pod object an extender is sent: the scheduler's current copy (admission's priority, the
        # simulation's nomination), not the object as loaded; without a view, the object as loaded
        self.pod_view = pod_view
        self.name = cfg.url_prefix
        self.trace_key = TRACE_PREFIX + cfg.url_prefix
        self.managed = {r.name for r in cfg.managed_resources}
        self.failures: list[ExtenderFailure] = []
        parts = urllib.parse.urlsplit(cfg.url_prefix)
        self._https = parts.scheme == "https"
        self._ssl: ssl.SSLContext | None = None
        if self._https:
            from pysched.framework.extender_http import make_ssl_context

            self._ssl = make_ssl_context(cfg, path)

    def __repr__(self) -> str:
        return f"HTTPExtender({self.name!r})"

    # ------------------------------------------------------------------ capabilities
    def is_filter(self) -> bool:
        return bool(self.config.filter_verb)

    def is_prioritizer(self) -> bool:
        return bool(self.config.prioritize_verb)

    def is_binder(self) -> bool:
        return bool(self.config.bind_verb)

    def supports_preemption(self) -> bool:
        return bool(self.config.preempt_verb)

    def is_ignorable(self) -> bool:
        return self.config.ignorable

    def is_interested(self, pod: Pod) -> bool:
        """True without managed resources, else when a container requests or limits one of them."""
        if not self.managed:
            return True
        for c in pod.containers + pod.init_containers:
            if any(r in self.managed for r in c.requests) or any(r in self.managed for r in c.limits):
                return True
        return False

    # ------------------------------------------------------------------ HTTP
    def url(self, verb: str) -> str:
        return self.config.url_prefix.rstrip("/") + "/" + verb

    def send(self, verb: str, args: Any) -> Any:
        """POST ``args`` as JSON to ``<urlPrefix>/<verb>``; the decoded JSON response, or ExtenderError."""
        url = self.url(verb)
        parts = urllib.parse.urlsplit(url)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        body = json.dumps(args, default=_json_default, separators=(",", ":")).encode()
        from pysched.framework import extender_http  # http.client and ssl only once an extender is called

        server = self.config.tls.server_name if self.config.tls else ""
        conn = extender_http.connection(parts.hostname or "", parts.port, self.config.http_timeout, self._ssl,
                                        server)
        try:
            conn.request("POST", target, body=body, headers={"Content-Type": "application/json"})
            resp = conn.getresponse()
            data = resp.read()
        except TimeoutError:
            raise ExtenderError(f'Post "{url}": context deadline exceeded '
                                f"(Client.Timeout exceeded while awaiting headers)") from None
        except (OSError, extender_http.HTTPException) as e:
            raise ExtenderError(f'Post "{url}": {_describe_os_error(e)}') from None
        finally:
            conn.close()
        if resp.status != 200:
            raise ExtenderError(f"failed {verb} with extender at URL {url}, code {resp.status}")
        try:
            return json.loads(data)
        except ValueError as e:
            raise ExtenderError(f"decoding the {verb} response of extender {self.name}: {e}") from None

    def _call(self, role: str, verb: str, args: Any, pod: Pod) -> Any:
        try:
            return self.send(verb, args)
        except ExtenderError as e:
            self.failures.append(ExtenderFailure(role, verb, pod.key, str(e), self.is_ignorable()))
            raise

    def _fail(self, role: str, verb: str, pod: Pod, message: str) -> ExtenderError:
        self.failures.append(ExtenderFailure(role, verb, pod.key, message, self.is_ignorable()))
        return ExtenderError(message)

    def _bad_response(self, role: str, verb: str, pod: Pod, what: str) -> ExtenderError:
        return self._fail(role, verb, pod, f"decoding the {verb} response of extender {self.name}: {what}")

    def _pod(self, pod: Pod) -> Mapping[str, Any]:
        return self.pod_view(pod) if self.pod_view is not None else pod.raw

    def _args(self, pod: Pod, nodes: list[NodeInfo]) -> dict:
        """Upstream ``ExtenderArgs``: the full nodes, or only their names to a node-cache-capable extender."""
        if self.config.node_cache_capable:
            return {"Pod": self._pod(pod), "Nodes": None, "NodeNames": [n.name for n in nodes]}
        return {"Pod": self._pod(pod), "Nodes": {"metadata": {}, "items": [n.node.raw for n in nodes]}, "NodeNames": None}

    # ------------------------------------------------------------------ Filter
    def filter(self, pod: Pod, nodes: list[NodeInfo]) -> tuple[list[NodeInfo], dict[str, str], dict[str, str]]:
        """(nodes that pass, failed node -> reason, failed-and-unresolvable node -> reason)."""
        if not self.is_filter():
            return list(nodes), {}, {}
        verb = self.config.filter_verb
        result = self._call("filter", verb, self._args(pod, nodes), pod)
        if not isinstance(result, Mapping):
            raise self._bad_response("filter", verb, pod, "expected an ExtenderFilterResult object")
        error = _field(result, "Error")
        if error:
            raise self._fail("filter", verb, pod, str(error))
        by_name = {n.name: n for n in nodes}
        names: list[str] | None = None
        node_names = _field(result, "NodeNames")
        node_list = _field(result, "Nodes")
        if self.config.node_cache_capable and node_names is not None:
            names = self._strings(verb, pod, node_names, "NodeNames")
            for name in names:
                if name not in by_name:
                    raise self._fail("filter", verb, pod, f'extender "{self.name}" claims a filtered node '
                                                          f'"{name}" which is not found in the input node list')
        elif node_list is not None:
            names = []
            items = _field(node_list, "items") if isinstance(node_list, Mapping) else None
            for item in items or []:
                meta = _field(item, "metadata") if isinstance(item, Mapping) else None
                got = _field(meta, "name") if isinstance(meta, Mapping) else None
                if not isinstance(got, str) or got not in by_name:
                    raise self._fail("filter", verb, pod, f'extender "{self.name}" returned a node '
                                                          f"{json.dumps(got)} which is not found in the input "
                                                          f"node list")
                names.append(got)
        passed = [by_name[n] for n in names or []]
        failed = self._reasons(verb, pod, _field(result, "FailedNodes"), "FailedNodes")
        unresolvable = self._reasons(verb, pod, _field(result, "FailedAndUnresolvableNodes"),
                                     "FailedAndUnresolvableNodes")
        return passed, failed, unresolvable

    def _strings(self, verb: str, pod: Pod, value: Any, what: str) -> list[str]:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self._bad_response("filter", verb, pod, f"{what} must be a list of node names")
        return value

    def _reasons(self, verb: str, pod: Pod, value: Any, what: str) -> dict[str, str]:
        if value is None:
            return {}
        if not isinstance(value, Mapping) or not all(isinstance(v, str) for v in value.values()):
            raise self._bad_response("filter", verb, pod, f"{what} must map node names to messages")
        return {str(k): v for k, v in value.items()}

    # ------------------------------------------------------------------ Prioritize
    def prioritize(self, pod: Pod, nodes: list[NodeInfo]) -> tuple[list[tuple[str, int]], int]:
        """(host, score) pairs as the extender returned them, and the weight to apply."""
        if not self.is_prioritizer():
            return [(n.name, 0) for n in nodes], 0
        verb = self.config.prioritize_verb
        result = self._call("prioritize", verb, self._args(pod, nodes), pod)
        out: list[tuple[str, int]] = []
        if result is None:
            return out, self.config.weight
        if not isinstance(result, list):
            raise self._bad_response("prioritize", verb, pod, "expected a HostPriorityList (a list)")
        for item in result:
            host = _field(item, "Host") if isinstance(item, Mapping) else None
            score = _field(item, "Score") if isinstance(item, Mapping) else None
            if score is None:
                score = 0
            if not isinstance(host, str) or isinstance(score, bool) or not isinstance(score, int):
                raise self._bad_response("prioritize", verb, pod,
                                         "every HostPriority needs a string Host and an integer Score")
            out.append((host, score))
        return out, self.config.weight

    # ------------------------------------------------------------------ Preemption
    def process_preemption(self, pod: Pod, victims: dict[str, Victims],
                           node_lookup: Callable[[str], NodeInfo | None]) -> dict[str, Victims]:
        """The extender's choice among the candidate nodes and their victims (upstream ``ProcessPreemption``)."""
        verb = self.config.preempt_verb
        if not verb:
            raise self._fail("preempt", "preempt", pod, f"preempt verb is not defined for extender {self.name} "
                                                        f"but run into ProcessPreemption")
        if self.config.node_cache_capable:
            meta = {n: {"Pods": [{"UID": p.uid} for p in v.pods], "NumPDBViolations": v.num_pdb_violations}
                    for n, v in victims.items()}
            args: dict = {"Pod": self._pod(pod), "NodeNameToVictims": None, "NodeNameToMetaVictims": meta}
        else:
            full = {n: {"Pods": [self._pod(p) for p in v.pods], "NumPDBViolations": v.num_pdb_violations}
                    for n, v in victims.items()}
            args = {"Pod": self._pod(pod), "NodeNameToVictims": full, "NodeNameToMetaVictims": None}
        result = self._call("preempt", verb, args, pod)
        returned = _field(result, "NodeNameToMetaVictims") if isinstance(result, Mapping) else None
        bad_result = result is not None and not isinstance(result, Mapping)
        if bad_result or (returned is not None and not isinstance(returned, Mapping)):
            raise self._bad_response("preempt", verb, pod,
                                     "expected an ExtenderPreemptionResult with NodeNameToMetaVictims")
        out: dict[str, Victims] = {}
        for node_name, meta_victims in (returned or {}).items():
            ni = node_lookup(node_name)
            if ni is None:
                raise self._fail("preempt", verb, pod, f'nodeinfo not found for node name "{node_name}"')
            meta_victims = meta_victims if isinstance(meta_victims, Mapping) else {}
            pdb = _field(meta_victims, "NumPDBViolations") or 0
            pods: list[Pod] = []
            for meta_pod in _field(meta_victims, "Pods") or []:
                uid = _field(meta_pod, "UID") if isinstance(meta_pod, Mapping) else None
                found = next((p for p in ni.pods if p.uid == uid), None)
                if found is None:
                    raise self._fail("preempt", verb, pod, f"extender: {self.name} claims to preempt pod "
                                                           f"(UID: &{{{uid}}}) on node: {node_name}, but the pod "
                                                           f"is not found on that node")
                pods.append(found)
            out[node_name] = Victims(pods, int(pdb) if isinstance(pdb, int) else 0)
        return out

    # ------------------------------------------------------------------ Bind (never called)
    def binding_args(self, pod: Pod, node: str) -> dict:
        """The ``ExtenderBindingArgs`` kube-scheduler would POST to ``bindVerb`` (pysched does not)."""
        return {"PodName": pod.name, "PodNamespace": pod.namespace, "PodUID": pod.meta.uid, "Node": node}


def _describe_os_error(e: BaseException) -> str:
    if isinstance(e, ConnectionRefusedError):
        return "connect: connection refused"
    text = str(e) or type(e).__name__
    return text


# ==================================================================================================
# Building the extenders of a configuration


def build_extenders(configs: Sequence[ExtenderConfig],
                    pod_view: Callable[[Pod], Mapping[str, Any]] | None = None) -> list[HTTPExtender]:
    """The extenders of a loaded configuration (decoded and checked at load), in the order kube-scheduler
    calls them: as configured, the ignorable ones last."""
    built = [HTTPExtender(cfg, pa.index("extenders", i), pod_view) for i, cfg in enumerate(configs)]
    return [e for e in built if not e.is_ignorable()] + [e for e in built if e.is_ignorable()]


def ignored_extended_resources(extenders: list[HTTPExtender]) -> list[str]:
    """Managed resources marked ``ignoredByScheduler``: NodeResourcesFit does not check them."""
    return [r.name for e in extenders for r in e.config.managed_resources if r.ignored_by_scheduler]


def with_ignored_resources(profile: ProfileConfig, ignored: list[str]) -> ProfileConfig:
    """The profile with NodeResourcesFit's ``ignoredResources`` replaced by ``ignored`` (upstream
    ``buildExtenders`` overwrites the list whenever some extender resource is ignored by the scheduler)."""
    if not ignored:
        return profile
    args = profile.plugin_args.get(_FIT_PLUGIN)
    if args is None or not hasattr(args, "ignored_resources"):
        raise ConfigError(f"profile {profile.scheduler_name}: can't find NodeResourcesFitArgs in plugin config "
                          f"(extenders ignore resources {', '.join(ignored)} for it)", field="extenders")
    new_args = replace(args, ignored_resources=list(ignored))
    return replace(profile, plugin_args={**profile.plugin_args, _FIT_PLUGIN: new_args})


# ==================================================================================================
# The scheduler's calls (upstream findNodesThatPassExtenders, prioritizeNodes, callExtenders, bind)


def has_filters(extenders: list[HTTPExtender]) -> bool:
    return any(e.is_filter() for e in extenders)


def has_prioritizers(extenders: list[HTTPExtender]) -> bool:
    return any(e.is_prioritizer() for e in extenders)


def find_nodes_that_pass_extenders(extenders: list[HTTPExtender], pod: Pod, feasible: list[NodeInfo],
                                   statuses: NodeToStatus) -> tuple[list[NodeInfo], Status | None]:
    """Each interested extender narrows the feasible nodes in turn; its failed nodes get statuses
    (unresolvable ones win). An error stops the cycle unless the extender is ignorable."""
    for ext in extenders:
        if not feasible:
            break
        if not ext.is_interested(pod):
            continue
        try:
            passed, failed, unresolvable = ext.filter(pod, feasible)
        except ExtenderError as e:
            if ext.is_ignorable():
                continue
            return [], Status(Code.Error, error=str(e)).with_plugin(ext.trace_key)
        for name, msg in unresolvable.items():
            statuses.set(name, Status(Code.UnschedulableAndUnresolvable, msg, plugin=ext.trace_key))
        for name, msg in failed.items():
            if name not in unresolvable:
                statuses.set(name, Status(Code.Unschedulable, msg, plugin=ext.trace_key))
        feasible = passed
    return feasible, None


def prioritize_with_extenders(extenders: list[HTTPExtender], pod: Pod,
                              nodes: list[NodeInfo]) -> dict[str, dict[str, int]]:
    """node -> ``extender:<urlPrefix>`` -> score × weight × (MaxNodeScore / MaxExtenderPriority).

    A failing extender gives no score (upstream ignores prioritize errors); hosts that are not among
    ``nodes`` are dropped."""
    wanted = {n.name for n in nodes}
    out: dict[str, dict[str, int]] = {}
    for ext in extenders:
        if not ext.is_interested(pod) or not ext.is_prioritizer():
            continue  # a non-prioritizing extender scores 0 everywhere
        try:
            scores, weight = ext.prioritize(pod, nodes)
        except ExtenderError:
            continue
        for host, score in scores:
            if host not in wanted:
                continue
            per = out.setdefault(host, {})
            per[ext.trace_key] = per.get(ext.trace_key, 0) + score * weight * SCORE_SCALE
    return out


def call_extenders_for_preemption(extenders: Sequence[HTTPExtender], pod: Pod, victims: dict[str, Victims],
                                  node_lookup: Callable[[str], NodeInfo | None]
                                  ) -> tuple[dict[str, Victims], Status | None]:
    """Upstream ``callExtenders``: every interested extender that supports preemption may drop candidate
    nodes or change their victims, in turn. Returns the remaining candidates, or an Error status."""
    if not extenders or not victims:
        return victims, None
    for ext in extenders:
        if not ext.supports_preemption() or not ext.is_interested(pod):
            continue
        try:
            result = ext.process_preemption(pod, victims, node_lookup)
        except ExtenderError as e:
            if ext.is_ignorable():
                continue
            return {}, Status(Code.Error, error=str(e))
        for name in list(result):
            if not result[name].pods:
                if ext.is_ignorable():
                    del result[name]
                    continue
                return {}, Status(Code.Error, error=f'expected at least one victim pod on node "{name}"')
        victims = result
        if not victims:
            break
    return victims, None


def binder_for(extenders: list[HTTPExtender], pod: Pod) -> HTTPExtender | None:
    """The extender that would bind the pod instead of the Bind plugins (the first interested binder)."""
    for ext in extenders:
        if ext.is_binder() and ext.is_interested(pod):
            return ext
    return None


_HANDLING = {
    "filter": "the pod's cycle ended in an Error",
    "prioritize": "no score from it, as upstream",
    "preempt": "preemption failed",
}


def failure_warnings(extenders: list[HTTPExtender]) -> list[str]:
    """One warning per extender and call that failed: how often, what followed, the first error."""
    out = []
    for ext in extenders:
        groups: dict[str, list[ExtenderFailure]] = {}
        for f in ext.failures:
            groups.setdefault(f.role, []).append(f)
        for role, fails in groups.items():
            first = fails[0]
            pods = len({f.pod for f in fails})
            handling = _HANDLING[role]
            if first.ignored and role != "prioritize":
                handling = "skipped: the extender is ignorable"
            out.append(f"extender {ext.name}: {role} ({first.verb}) failed {len(fails)} time(s) for {pods} "
                       f"pod(s), {handling}; first, for pod {first.pod}: {first.message}")
    return out
