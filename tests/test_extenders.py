"""HTTP extenders against a real extender served in the test process (127.0.0.1, an ephemeral port)."""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from pysched.errors import ConfigError, PyschedError
from pysched.framework.config import build_config
from pysched.framework.extender import (
    ExtenderError,
    HTTPExtender,
    Victims,
    build_extenders,
    call_extenders_for_preemption,
    decode_extenders,
)
from pysched.plugins import defaultpreemption, in_tree_registry
from pysched.scheduler.simulation import Simulation, SimulationOptions
from pysched.snapshot.cluster import ClusterState
from pysched.snapshot.loader import Document, build_cluster

REGISTRY = in_tree_registry()
Handler = Callable[[dict], Any]


# ==================================================================================================
# A scriptable extender


class FakeExtender:
    """Answers ``POST /<verb>`` with ``handlers[verb](body)``: a JSON value, or ``(status, value)``."""

    def __init__(self) -> None:
        self.handlers: dict[str, Handler] = {}
        self.requests: list[tuple[str, dict]] = []
        self.delay = 0.0
        self.server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/scheduler"

    def verbs(self) -> list[str]:
        return [path.rsplit("/", 1)[-1] for path, _ in self.requests]

    def start(self, server_class: type[ThreadingHTTPServer] = ThreadingHTTPServer) -> None:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"null")
                fake.requests.append((self.path, body))
                verb = self.path.rsplit("/", 1)[-1]
                if fake.delay:
                    time.sleep(fake.delay)
                handler = fake.handlers.get(verb)
                status, answer = (404, {"error": "no such verb"}) if handler is None else (200, handler(body))
                if isinstance(answer, tuple):
                    status, answer = answer
                data = json.dumps(answer).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the client gave up (a timeout test)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = server_class(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


@pytest.fixture
def ext() -> Iterator[FakeExtender]:
    fake = FakeExtender()
    fake.start()
    yield fake
    fake.stop()


# ==================================================================================================
# Snapshot and configuration helpers


def node(name: str, cpu: str = "4", labels: dict | None = None, extra: dict | None = None) -> dict:
    alloc = {"cpu": cpu, "memory": "8Gi", "pods": "10", **(extra or {})}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
            "status": {"allocatable": alloc, "capacity": alloc}}


def pod(name: str, cpu: str = "1", priority: int = 0, node_name: str = "", extra: dict | None = None,
        created: int = 0) -> dict:
    spec: dict = {"containers": [{"name": "c", "image": "img",
                                  "resources": {"requests": {"cpu": cpu, **(extra or {})}}}],
                  "priority": priority}
    if node_name:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}",
                         "creationTimestamp": f"2026-01-01T00:00:{created:02d}Z"},
            "spec": spec, "status": {"phase": "Running" if node_name else "Pending"}}


def config(*extenders: dict, **top: Any) -> Any:
    raw = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "extenders": list(extenders), **top}
    return build_config(raw, REGISTRY)


def run(objs: list[dict], cfg: Any, **opts: Any) -> Any:
    cluster = build_cluster([(Document("test", i + 1, o), o, "") for i, o in enumerate(objs)])
    return Simulation(cluster, cfg, REGISTRY, SimulationOptions(trace=True, **opts)).run()


def cycle(result: Any, pod_key: str, pass_no: int = 1) -> Any:
    return next(c for c in result.cycles if c.pod == pod_key and c.pass_no == pass_no)


THREE_NODES = [node("n1"), node("n2"), node("n3")]


def filter_result(passed: list[str], failed: dict | None = None, unresolvable: dict | None = None) -> dict:
    return {"Nodes": {"metadata": {}, "items": [{"metadata": {"name": n}} for n in passed]},
            "NodeNames": None, "FailedNodes": failed or {}, "FailedAndUnresolvableNodes": unresolvable or {},
            "Error": ""}


# ==================================================================================================
# Filter


def test_filter_narrows_nodes_and_sets_statuses(ext: FakeExtender) -> None:
    ext.handlers["filter"] = lambda body: filter_result(
        ["n3"], failed={"n1": "node is cordoned by the extender"}, unresolvable={"n2": "no licence here"})
    result = run([*THREE_NODES, pod("p")], config({"urlPrefix": ext.url, "filterVerb": "filter"}))
    c = cycle(result, "default/p")
    assert (c.outcome, c.node) == ("Scheduled", "n3")
    key = f"extender:{ext.url}"
    assert c.filter["n1"].code.name == "Unschedulable" and c.filter["n1"].plugin == key
    assert c.filter["n2"].code.name == "UnschedulableAndUnresolvable"
    assert c.filter["n2"].reasons == ["no licence here"]
    # the request: upstream's ExtenderArgs with the full nodes
    path, body = ext.requests[0]
    assert path == "/scheduler/filter"
    assert body["Pod"]["metadata"]["name"] == "p"
    assert [n["metadata"]["name"] for n in body["Nodes"]["items"]] == ["n1", "n2", "n3"]
    assert body["NodeNames"] is None


def test_filter_reasons_reach_the_failed_scheduling_message(ext: FakeExtender) -> None:
    ext.handlers["filter"] = lambda body: filter_result(
        [], failed={"n1": "too hot", "n2": "too hot"}, unresolvable={"n3": "wrong rack", "n2": "wrong rack"})
    result = run([*THREE_NODES, pod("p")], config({"urlPrefix": ext.url, "filterVerb": "filter"}))
    c = cycle(result, "default/p")
    assert c.outcome == "Unschedulable"
    # unresolvable wins for n2; preemption finds no victims on n1 (the only Unschedulable node)
    assert c.message.startswith("0/3 nodes are available: 1 too hot, 2 wrong rack.")
    assert result.pending == ["default/p"]


def test_node_cache_capable_sends_and_reads_node_names(ext: FakeExtender) -> None:
    ext.handlers["filter"] = lambda body: {"NodeNames": ["n2"], "FailedNodes": {"n1": "x", "n3": "y"}}
    cfg = config({"urlPrefix": ext.url, "filterVerb": "filter", "nodeCacheCapable": True})
    result = run([*THREE_NODES, pod("p")], cfg)
    assert cycle(result, "default/p").node == "n2"
    body = ext.requests[0][1]
    assert body["Nodes"] is None and body["NodeNames"] == ["n1", "n2", "n3"]


def test_node_cache_capable_unknown_node_is_an_error(ext: FakeExtender) -> None:
    ext.handlers["filter"] = lambda body: {"NodeNames": ["n9"]}
    cfg = config({"urlPrefix": ext.url, "filterVerb": "filter", "nodeCacheCapable": True})
    c = cycle(run([*THREE_NODES, pod("p")], cfg), "default/p")
    assert c.outcome == "Error"
    assert c.message == f'extender "{ext.url}" claims a filtered node "n9" which is not found in the input node list'


def test_filter_error_field_fails_the_cycle(ext: FakeExtender) -> None:
    ext.handlers["filter"] = lambda body: {"Error": "licence server unreachable"}
    c = cycle(run([*THREE_NODES, pod("p")], config({"urlPrefix": ext.url, "filterVerb": "filter"})), "default/p")
    assert (c.outcome, c.message, c.error) == ("Error", "licence server unreachable", "licence server unreachable")


def test_http_error_response(ext: FakeExtender) -> None:
    ext.handlers["filter"] = lambda body: (500, {"oops": True})
    result = run([*THREE_NODES, pod("p")], config({"urlPrefix": ext.url, "filterVerb": "filter"}))
    c = cycle(result, "default/p")
    assert c.outcome == "Error"
    assert c.message == f"failed filter with extender at URL {ext.url}/filter, code 500"
    assert cycle(result, "default/p", 2).outcome == "Error"  # still pending: tried again in pass 2
    assert any("filter (filter) failed 2 time(s) for 1 pod(s)" in w for w in result.warnings)


def test_ignorable_extender_error_is_skipped(ext: FakeExtender) -> None:
    ext.handlers["filter"] = lambda body: (503, None)
    cfg = config({"urlPrefix": ext.url, "filterVerb": "filter", "ignorable": True})
    result = run([*THREE_NODES, pod("p")], cfg)
    assert cycle(result, "default/p").outcome == "Scheduled"
    assert any("skipped: the extender is ignorable" in w for w in result.warnings)


def test_timeout(ext: FakeExtender) -> None:
    ext.delay = 1.0
    ext.handlers["filter"] = lambda body: filter_result(["n1"])
    cfg = config({"urlPrefix": ext.url, "filterVerb": "filter", "httpTimeout": "100ms"})
    started = time.monotonic()
    result = run([*THREE_NODES, pod("p")], cfg, passes=1)
    assert time.monotonic() - started < 0.9
    c = cycle(result, "default/p")
    assert c.outcome == "Error"
    assert c.message == (f'Post "{ext.url}/filter": context deadline exceeded '
                         f"(Client.Timeout exceeded while awaiting headers)")


def test_timeout_of_an_ignorable_extender(ext: FakeExtender) -> None:
    ext.delay = 1.0
    ext.handlers["filter"] = lambda body: filter_result([])
    cfg = config({"urlPrefix": ext.url, "filterVerb": "filter", "httpTimeout": "100ms", "ignorable": True})
    c = cycle(run([*THREE_NODES, pod("p")], cfg, passes=1), "default/p")
    assert c.outcome == "Scheduled"


def test_connection_refused() -> None:
    cfg = config({"urlPrefix": "http://127.0.0.1:9/x", "filterVerb": "filter", "httpTimeout": "1s"})
    c = cycle(run([*THREE_NODES, pod("p")], cfg, passes=1), "default/p")
    assert c.outcome == "Error"
    assert c.message.startswith('Post "http://127.0.0.1:9/x/filter": ')


def test_fail_fast_stops_at_the_first_error(ext: FakeExtender) -> None:
    ext.handlers["filter"] = lambda body: (500, None)
    with pytest.raises(PyschedError) as info:
        run([*THREE_NODES, pod("p"), pod("q")], config({"urlPrefix": ext.url, "filterVerb": "filter"}),
            fail_fast=True)
    assert info.value.exit_code == 1
    assert "default/p" in str(info.value) and "code 500" in str(info.value)
    assert len(ext.requests) == 1


def test_ignorable_extenders_are_called_last() -> None:
    built = build_extenders(decode_extenders([
        {"urlPrefix": "http://a", "ignorable": True}, {"urlPrefix": "http://b"},
        {"urlPrefix": "http://c", "ignorable": True}, {"urlPrefix": "http://d"}]))
    assert [e.name for e in built] == ["http://b", "http://d", "http://a", "http://c"]


def test_not_interested_extender_is_not_called(ext: FakeExtender) -> None:
    ext.handlers["filter"] = lambda body: filter_result([])
    cfg = config({"urlPrefix": ext.url, "filterVerb": "filter",
                  "managedResources": [{"name": "example.com/gpu"}]})
    objs = [*[node(n, extra={"example.com/gpu": "2"}) for n in ("n1", "n2")], pod("plain", created=1),
            pod("gpu", extra={"example.com/gpu": "1"}, created=2)]
    result = run(objs, cfg, passes=1)
    assert cycle(result, "default/plain").outcome == "Scheduled"
    assert cycle(result, "default/gpu").outcome == "Unschedulable"
    assert [b["Pod"]["metadata"]["name"] for _, b in ext.requests] == ["gpu"]


def test_managed_resource_ignored_by_scheduler() -> None:
    objs = [node("n1"), pod("p", extra={"example.com/fpga": "1"})]
    plain = config()
    assert cycle(run(objs, plain, passes=1), "default/p").outcome == "Unschedulable"
    ignoring = config({"urlPrefix": "http://127.0.0.1:9", "managedResources": [
        {"name": "example.com/fpga", "ignoredByScheduler": True}]})
    assert cycle(run(objs, ignoring, passes=1), "default/p").node == "n1"


# ==================================================================================================
# Prioritize


def test_prioritize_scores_are_weighted_and_added(ext: FakeExtender) -> None:
    ext.handlers["prioritize"] = lambda body: [{"Host": "n1", "Score": 0}, {"Host": "n2", "Score": 10},
                                               {"Host": "n3", "Score": 3}, {"Host": "elsewhere", "Score": 10}]
    cfg = config({"urlPrefix": ext.url, "prioritizeVerb": "prioritize", "weight": 5})
    c = cycle(run([*THREE_NODES, pod("p")], cfg), "default/p")
    key = f"extender:{ext.url}"
    assert c.node == "n2"
    assert c.scores["n2"][key] == 10 * 5 * 10
    assert c.scores["n3"][key] == 3 * 5 * 10
    assert c.scores["n1"][key] == 0
    assert c.totals()["n2"] == sum(c.scores["n2"].values())
    assert "elsewhere" not in c.scores


def test_prioritize_error_gives_no_score(ext: FakeExtender) -> None:
    ext.handlers["prioritize"] = lambda body: (500, None)
    cfg = config({"urlPrefix": ext.url, "prioritizeVerb": "prioritize", "weight": 1})
    result = run([*THREE_NODES, pod("p")], cfg)
    c = cycle(result, "default/p")
    assert c.outcome == "Scheduled"
    assert all(f"extender:{ext.url}" not in s for s in c.scores.values())
    assert any("no score from it" in w for w in result.warnings)


def test_prioritizer_without_score_plugins_sums_its_scores(ext: FakeExtender) -> None:
    ext.handlers["prioritize"] = lambda body: [{"host": "n3", "score": 1}]  # Go matches names ignoring case
    cfg = config({"urlPrefix": ext.url, "prioritizeVerb": "prioritize", "weight": 1},
                 profiles=[{"schedulerName": "default-scheduler", "plugins": {"score": {"disabled": [{"name": "*"}]}}}])
    c = cycle(run([*THREE_NODES, pod("p")], cfg), "default/p")
    assert c.node == "n3"
    assert c.totals() == {"n1": 0, "n2": 0, "n3": 10}


# ==================================================================================================
# Preemption


def _victims_state() -> tuple[ClusterState, Any]:
    objs = [node("n1", cpu="1"), node("n2", cpu="1"), pod("low1", node_name="n1"), pod("low2", node_name="n2"),
            pod("high", priority=100)]
    cluster = build_cluster([(Document("test", i + 1, o), o, "") for i, o in enumerate(objs)])
    state = ClusterState(cluster)
    return state, next(p for p in cluster.pods if p.name == "high")


def test_process_preemption_round_trip(ext: FakeExtender) -> None:
    state, high = _victims_state()
    ext.handlers["preempt"] = lambda body: {"NodeNameToMetaVictims": {
        "n2": {"Pods": [{"UID": "uid-low2"}], "NumPDBViolations": 0}}}
    [extender] = build_extenders(decode_extenders([{"urlPrefix": ext.url, "preemptVerb": "preempt"}]))
    victims = {n: Victims([p for p in state.get(n).pods], 0) for n in ("n1", "n2")}
    out, st = call_extenders_for_preemption([extender], high, victims, state.get)
    assert st is None
    assert list(out) == ["n2"] and [p.name for p in out["n2"].pods] == ["low2"]
    body = ext.requests[0][1]
    assert body["Pod"]["metadata"]["name"] == "high"
    assert sorted(body["NodeNameToVictims"]) == ["n1", "n2"]
    assert body["NodeNameToVictims"]["n1"]["Pods"][0]["metadata"]["name"] == "low1"
    assert body["NodeNameToMetaVictims"] is None


def test_process_preemption_node_cache_capable_and_errors(ext: FakeExtender) -> None:
    state, high = _victims_state()
    victims = {n: Victims([p for p in state.get(n).pods], 1) for n in ("n1", "n2")}
    ext.handlers["preempt"] = lambda body: {"NodeNameToMetaVictims": {"n1": {"Pods": [{"UID": "nope"}]}}}
    [extender] = build_extenders(decode_extenders([{"urlPrefix": ext.url, "preemptVerb": "preempt",
                                                    "nodeCacheCapable": True}]))
    out, st = call_extenders_for_preemption([extender], high, victims, state.get)
    assert st is not None and st.code.name == "Error"
    assert st.message() == (f"extender: {ext.url} claims to preempt pod (UID: &{{nope}}) on node: n1, "
                            f"but the pod is not found on that node")
    assert ext.requests[0][1]["NodeNameToMetaVictims"]["n1"] == {"Pods": [{"UID": "uid-low1"}],
                                                                 "NumPDBViolations": 1}
    # a node left without victims: an error, unless the extender is ignorable (then the node is dropped)
    ext.handlers["preempt"] = lambda body: {"NodeNameToMetaVictims": {"n1": {"Pods": []},
                                                                      "n2": {"Pods": [{"UID": "uid-low2"}]}}}
    out, st = call_extenders_for_preemption([extender], high, victims, state.get)
    assert st is not None and st.message() == 'expected at least one victim pod on node "n1"'
    [ignorable] = build_extenders(decode_extenders([{"urlPrefix": ext.url, "preemptVerb": "preempt",
                                                     "ignorable": True}]))
    out, st = call_extenders_for_preemption([ignorable], high, victims, state.get)
    assert st is None and list(out) == ["n2"]
    ext.handlers["preempt"] = lambda body: (500, None)
    out, st = call_extenders_for_preemption([ignorable], high, victims, state.get)
    assert st is None and out is victims


@pytest.mark.skipif(not hasattr(defaultpreemption.DefaultPreemption, "call_extenders"),
                    reason="DefaultPreemption does not call extenders yet (see the wiring notes)")
def test_preemption_asks_the_extender(ext: FakeExtender) -> None:
    ext.handlers["preempt"] = lambda body: {"NodeNameToMetaVictims": {
        "n2": {"Pods": [{"UID": "uid-low2"}], "NumPDBViolations": 0}}}
    objs = [node("n1", cpu="1"), node("n2", cpu="1"), pod("low1", node_name="n1"), pod("low2", node_name="n2"),
            pod("high", priority=100)]
    result = run(objs, config({"urlPrefix": ext.url, "preemptVerb": "preempt"}), passes=1)
    c = cycle(result, "default/high")
    assert (c.outcome, c.nominated_node, c.victims) == ("Nominated", "n2", ["default/low2"])
    ext.handlers["preempt"] = lambda body: (500, None)
    c = cycle(run(objs, config({"urlPrefix": ext.url, "preemptVerb": "preempt"}), passes=1), "default/high")
    assert c.outcome == "Unschedulable"
    assert c.message.endswith(f"preemption: failed preempt with extender at URL {ext.url}/preempt, code 500")


# ==================================================================================================
# Bind, configuration, TLS


def test_binding_extender_is_named_but_never_called(ext: FakeExtender) -> None:
    cfg = config({"urlPrefix": ext.url, "bindVerb": "bind"})
    c = cycle(run([*THREE_NODES, pod("p")], cfg), "default/p")
    assert c.outcome == "Scheduled" and c.bound_by == f"extender:{ext.url}"
    assert ext.requests == []
    extender = HTTPExtender(decode_extenders([{"urlPrefix": ext.url, "bindVerb": "bind"}])[0])
    assert extender.is_binder()


@pytest.mark.parametrize(("entry", "field", "text"), [
    ({"urlPrefix": "ftp://x"}, "extenders[0].urlPrefix", "must be an http:// or https:// URL"),
    ({"urlPrefix": "http://x", "httpTimeout": "-1s"}, "extenders[0].httpTimeout", "must not be negative"),
    ({"urlPrefix": "https://x", "tlsConfig": {"caData": "***"}}, "extenders[0].tlsConfig.caData", "base64"),
    ({"urlPrefix": "https://x", "tlsConfig": {"insecure": True, "caFile": "/x"}}, "extenders[0].tlsConfig",
     "insecure flag is not allowed"),
    ({"urlPrefix": "https://x", "tlsConfig": {"caFile": "/does/not/exist"}}, "extenders[0].tlsConfig",
     "cannot set up TLS"),
])
def test_bad_extender_settings(entry: dict, field: str, text: str) -> None:
    with pytest.raises(ConfigError) as info:
        decode_extenders([entry])
    assert info.value.field == field
    assert text in info.value.detail


@pytest.mark.parametrize(("entry", "field", "text"), [
    ({"urlPrefix": "ftp://x"}, "extenders[0].urlPrefix", "must be an http:// or https:// URL"),
    ({"urlPrefix": "http://x", "httpTimeout": "-1s"}, "extenders[0].httpTimeout", "must not be negative"),
    ({"urlPrefix": "https://x", "tlsConfig": {"caFile": "/does/not/exist"}}, "extenders[0].tlsConfig",
     "cannot set up TLS"),
])
def test_bad_extenders_are_refused_when_the_configuration_loads(entry: dict, field: str, text: str) -> None:
    """Not when a simulation starts: ``plugins --config``, ``config show`` and a bad --config before any
    snapshot is read all refuse it."""
    with pytest.raises(ConfigError) as info:
        config(entry)
    assert info.value.field == field
    assert text in info.value.detail
    loaded = config({"urlPrefix": "http://x", "httpTimeout": "2s", "managedResources": [{"name": "example.com/x"}]})
    [ext] = loaded.extenders
    assert (ext.url_prefix, ext.http_timeout, ext.managed_resources[0].name) == ("http://x", 2.0, "example.com/x")


def test_config_validation_still_applies() -> None:
    with pytest.raises(ConfigError, match="must have a positive weight"):
        config({"urlPrefix": "http://x", "prioritizeVerb": "p"})


def test_timeout_default_and_parsing() -> None:
    [a, b] = decode_extenders([{"urlPrefix": "http://x"}, {"urlPrefix": "http://x", "httpTimeout": "1m30s"}])
    assert (a.http_timeout, b.http_timeout) == (5.0, 90.0)


def test_send_decodes_json_errors(ext: FakeExtender) -> None:
    ext.handlers["v"] = lambda body: "not an object"
    [extender] = build_extenders(decode_extenders([{"urlPrefix": ext.url, "filterVerb": "v"}]))
    state, high = _victims_state()
    with pytest.raises(ExtenderError, match="decoding the v response"):
        extender.filter(high, state.node_infos)


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is needed to make a test certificate")
def test_https_extender_with_enable_https(tmp_path: Path) -> None:
    import ssl

    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
                    "/CN=extender.test", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)

    class TLSServer(ThreadingHTTPServer):
        def get_request(self) -> Any:
            sock, addr = super().get_request()
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(cert, key)
            return ctx.wrap_socket(sock, server_side=True), addr

    fake = FakeExtender()
    fake.start(TLSServer)
    try:
        fake.handlers["filter"] = lambda body: filter_result(["n2"])
        url = fake.url.replace("http://", "https://")
        objs = [*THREE_NODES, pod("p")]
        # enableHTTPS without a CA: no verification (upstream's makeTransport)
        c = cycle(run(objs, config({"urlPrefix": url, "filterVerb": "filter", "enableHTTPS": True})), "default/p")
        assert c.node == "n2"
        # the certificate as CA, and the name it was issued to
        tls = {"caFile": str(cert), "serverName": "extender.test"}
        c = cycle(run(objs, config({"urlPrefix": url, "filterVerb": "filter", "tlsConfig": tls})), "default/p")
        assert c.node == "n2"
        # verification on, against the system CAs: the self-signed certificate is refused
        c = cycle(run(objs, config({"urlPrefix": url, "filterVerb": "filter"}), passes=1), "default/p")
        assert c.outcome == "Error" and "CERTIFICATE_VERIFY_FAILED" in c.message
    finally:
        fake.stop()


def test_extenders_get_the_current_pod_not_the_loaded_one(ext: FakeExtender) -> None:
    """Upstream sends the scheduler's copy of the pod: priority from its class (admission), and in a
    later cycle the node preemption nominated it to. The loaded object is left as it was."""
    ext.handlers["filter"] = lambda body: filter_result([n["metadata"]["name"] for n in body["Nodes"]["items"]])
    klass = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "top"},
             "value": 1000}
    high = pod("high", cpu="1")
    del high["spec"]["priority"]
    high["spec"]["priorityClassName"] = "top"
    objs = [klass, node("n1", cpu="1"), pod("low", cpu="1", node_name="n1"), high]
    result = run(objs, config({"urlPrefix": ext.url, "filterVerb": "filter"}))
    assert [(c.pass_no, c.outcome) for c in result.cycles if c.pod == "default/high"] == [
        (1, "Nominated"), (2, "Scheduled")]
    sent = [b["Pod"] for _, b in ext.requests if b["Pod"]["metadata"]["name"] == "high"]
    assert sent and all(p["spec"]["priority"] == 1000 for p in sent)
    assert sent[-1]["status"]["nominatedNodeName"] == "n1"
    assert "priority" not in high["spec"] and "nominatedNodeName" not in high["status"]
