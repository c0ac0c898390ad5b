"""Live clusters, read-only: against a real HTTP(S) API server in this process (tests/live_server.py),
through the official kubernetes client, never a mock of it."""

from __future__ import annotations

import dataclasses
import gzip
import json
import re
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
import yaml
from typer.testing import CliRunner

from pysched.cli.live_cmd import progress_printer, register
from pysched.errors import InputError, SourceError
from pysched.framework.config import load_config
from pysched.plugins import in_tree_registry
from pysched.report.serialize import to_json
from pysched.scheduler.simulation import Simulation, SimulationOptions
from pysched.snapshot import export, live
from pysched.snapshot.cluster import Cluster
from pysched.snapshot.loader import load_snapshot
from tests.conformance.compare import FIELDS, compare, load
from tests.live_server import FakeApiServer, TlsFiles, b64, make_tls

SCENARIOS = Path(__file__).parent / "conformance" / "scenarios"
TAINTS = SCENARIOS / "001-taints.yaml"
TAINTS_EXPECTED = SCENARIOS / "001-taints.expected.json.gz"
TOKEN = "s3cr3t-token-of-alice"


def scenario_objects() -> list[dict]:
    return [d for d in yaml.safe_load_all(TAINTS.read_text()) if d]


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> TlsFiles:
    return make_tls(tmp_path_factory.mktemp("tls"))


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No kubeconfig, proxy or service account of the machine running the tests leaks in."""
    for var in ("KUBECONFIG", "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy",
                "NO_PROXY", "no_proxy", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"):
        monkeypatch.delenv(var, raising=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setattr(live, "SERVICE_ACCOUNT_DIR", str(tmp_path / "no-service-account"))


@pytest.fixture
def server(tls: TlsFiles) -> Iterator[FakeApiServer]:
    with FakeApiServer(scenario_objects(), tokens={TOKEN: "alice"}, tls=tls) as srv:
        yield srv


def kubeconfig(path: Path, server: str, *, ca: Path | None = None, ca_file: str | None = None,
               user: dict | None = None, user_name: str = "alice", context: str = "dev",
               cluster: str = "test-cluster", current: str | None = "dev", more_contexts: tuple[str, ...] = (),
               insecure: bool = False) -> Path:
    cl: dict = {"server": server}
    if ca is not None:
        cl["certificate-authority-data"] = b64(ca)
    if ca_file is not None:
        cl["certificate-authority"] = ca_file
    if insecure:
        cl["insecure-skip-tls-verify"] = True
    contexts = [{"name": context, "context": {"cluster": cluster, "user": user_name}}]
    contexts += [{"name": c, "context": {"cluster": cluster, "user": user_name}} for c in more_contexts]
    doc = {"apiVersion": "v1", "kind": "Config", "clusters": [{"name": cluster, "cluster": cl}],
           "contexts": contexts, "users": [{"name": user_name, "user": user if user is not None else {"token": TOKEN}}]}
    if current is not None:
        doc["current-context"] = current
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(doc))
    return path


def simulate(cluster: Cluster) -> dict:
    registry = in_tree_registry()
    cfg = load_config(None, registry)
    result = Simulation(cluster, cfg, registry, SimulationOptions(tie_break="name", trace=True)).run()
    return json.loads(to_json(result.to_dict()))


def assert_recorded_decisions(actual: dict) -> None:
    expected = load(str(TAINTS_EXPECTED))
    agree, disagree, notes = compare(expected, actual, FIELDS)
    assert disagree == 0 and not notes, notes[:5]
    assert agree == len(expected["cycles"])
    assert actual["bindings"] == expected["bindings"]


def value(x: object) -> object:
    """Model objects as plain values (Node and Pod compare by identity)."""
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return type(x).__name__, tuple((f.name, value(getattr(x, f.name))) for f in dataclasses.fields(x))
    if isinstance(x, dict):
        return {k: value(v) for k, v in x.items()}
    if isinstance(x, (list, tuple, set, frozenset)):
        return [value(v) for v in x]
    if isinstance(x, (str, int, float, bool, type(None))):
        return x
    slots = [s for c in type(x).__mro__ for s in getattr(c, "__slots__", ())]
    attrs = {s: getattr(x, s, None) for s in slots} if slots else dict(vars(x))
    return type(x).__name__, value(attrs)


def assert_same_cluster(a: Cluster, b: Cluster) -> None:
    assert [n.name for n in a.nodes] == [n.name for n in b.nodes]
    assert value(a.nodes) == value(b.nodes)
    assert [(p.key, p.priority, p.node_name, p.priority_class_name) for p in a.pods] == \
        [(p.key, p.priority, p.node_name, p.priority_class_name) for p in b.pods]
    assert value(a.pods) == value(b.pods)
    assert value(a.priority_classes) == value(b.priority_classes)
    assert value(a.namespaces) == value(b.namespaces)
    assert value(a.pdbs) == value(b.pdbs) and value(a.workloads) == value(b.workloads)


# ---------------------------------------------------------------------------------------------- the data
def test_live_cluster_equals_the_file_load_and_simulates_as_recorded(server: FakeApiServer, tmp_path: Path) -> None:
    kc = kubeconfig(tmp_path / "kubeconfig", server.url, ca=server.tls.ca_cert)
    cluster = live.load_live(str(kc), None)
    assert_same_cluster(cluster, load_snapshot([str(TAINTS)]))
    assert cluster.sources == [server.url]
    assert_recorded_decisions(simulate(cluster))


def test_only_get_requests_and_the_list_protocol(server: FakeApiServer, tmp_path: Path) -> None:
    kc = kubeconfig(tmp_path / "kubeconfig", server.url, ca=server.tls.ca_cert)
    live.load_live(str(kc), None)
    assert server.methods() == {"GET"}
    assert all(r.user == "alice" and r.status == 200 for r in server.requests)
    listed = {r.path for r in server.requests}
    for path in ("/api/v1/nodes", "/api/v1/pods", "/api/v1/namespaces", "/apis/scheduling.k8s.io/v1/priorityclasses",
                 "/apis/policy/v1/poddisruptionbudgets", "/api/v1/services", "/api/v1/replicationcontrollers",
                 "/apis/apps/v1/replicasets", "/apis/apps/v1/statefulsets", "/api/v1/persistentvolumes",
                 "/api/v1/persistentvolumeclaims", "/apis/storage.k8s.io/v1/storageclasses",
                 "/apis/storage.k8s.io/v1/csinodes", "/apis/storage.k8s.io/v1/csidrivers",
                 "/apis/resource.k8s.io/v1/deviceclasses", "/apis/resource.k8s.io/v1/resourceslices",
                 "/apis/resource.k8s.io/v1/resourceclaims", "/apis/resource.k8s.io/v1/resourceclaimtemplates"):
        assert path in listed
        assert server.requests_for(path)[0].query.get("limit") == "500"
    (pods,) = server.requests_for("/api/v1/pods")
    assert pods.query["fieldSelector"] == "status.phase!=Succeeded,status.phase!=Failed"


def test_finished_pods_are_filtered_by_the_server(tls: TlsFiles, tmp_path: Path) -> None:
    objs = scenario_objects()
    done = []
    for phase in ("Succeeded", "Failed"):
        pod = json.loads(json.dumps(next(o for o in objs if o["kind"] == "Pod")))
        pod["metadata"]["name"] = f"finished-{phase.lower()}"
        pod.setdefault("status", {})["phase"] = phase
        done.append(pod)
    with FakeApiServer(objs + done, tokens={TOKEN: "alice"}, tls=tls) as srv:
        kc = kubeconfig(tmp_path / "kubeconfig", srv.url, ca=tls.ca_cert)
        snap = live.read_live(str(kc), None)
    names = {o["metadata"]["name"] for o in snap.objects if o["kind"] == "Pod"}
    assert names and not names & {"finished-succeeded", "finished-failed"}


def test_pagination_expired_continue_and_progress(tls: TlsFiles, tmp_path: Path) -> None:
    calls: list[tuple[str, int, bool]] = []
    with FakeApiServer(scenario_objects(), tokens={TOKEN: "alice"}, tls=tls, page_cap=3, expire_continue=1) as srv:
        kc = kubeconfig(tmp_path / "kubeconfig", srv.url, ca=tls.ca_cert)
        cluster = live.load_live(str(kc), None, progress=lambda *a: calls.append(a))
        node_reqs = srv.requests_for("/api/v1/nodes")
        pod_reqs = srv.requests_for("/api/v1/pods")
    assert_same_cluster(cluster, load_snapshot([str(TAINTS)]))
    # nodes: page 1, an expired continue (410), then one full list as client-go's pager does
    assert [r.status for r in node_reqs] == [200, 410, 200]
    assert "continue" in node_reqs[1].query and "limit" not in node_reqs[2].query
    # pods: 17 in pages of 3, each continue token from the page before, the field selector on every page
    assert len(pod_reqs) == 6 and all(r.status == 200 for r in pod_reqs)
    assert all(r.query["fieldSelector"] == live.POD_FIELD_SELECTOR for r in pod_reqs)
    assert all("continue" in r.query for r in pod_reqs[1:])
    pod_progress = [c for c in calls if c[0] == "Pod"]
    assert pod_progress == [("Pod", n, n == 17) for n in (3, 6, 9, 12, 15, 17)]
    assert {c[0] for c in calls if c[2]} == {r.kind for r in live.RESOURCES}


def test_throttling_is_retried_a_bounded_number_of_times(tls: TlsFiles, tmp_path: Path) -> None:
    with FakeApiServer(scenario_objects(), tokens={TOKEN: "alice"}, tls=tls, throttle=2) as srv:
        assert len(live.load_live(str(kubeconfig(tmp_path / "kc", srv.url, ca=tls.ca_cert)), None).nodes) == 7
        assert [r.status for r in srv.requests_for("/api/v1/nodes")] == [429, 429, 200]
    with FakeApiServer(scenario_objects(), tokens={TOKEN: "alice"}, tls=tls, throttle=100) as srv:
        with pytest.raises(SourceError, match="answered GET /api/v1/nodes with HTTP 429: Too many requests"):
            live.load_live(str(kubeconfig(tmp_path / "kc", srv.url, ca=tls.ca_cert)), None)
        assert len(srv.requests_for("/api/v1/nodes")) == live.THROTTLE_RETRIES + 1


def test_items_get_kind_and_api_version_and_lose_managed_fields(tls: TlsFiles, tmp_path: Path) -> None:
    objs = scenario_objects()
    for o in objs:
        o["metadata"]["managedFields"] = [{"manager": "kubectl", "operation": "Update"}]
    with FakeApiServer(objs, tokens={TOKEN: "alice"}, tls=tls) as srv:
        assert all("kind" not in it for items in srv.by_path.values() for it in items)
        snap = live.read_live(str(kubeconfig(tmp_path / "kc", srv.url, ca=tls.ca_cert)), None)
    kinds = {(o["kind"], o["apiVersion"]) for o in snap.objects}
    assert kinds == {("Node", "v1"), ("Namespace", "v1"), ("PriorityClass", "scheduling.k8s.io/v1"), ("Pod", "v1")}
    assert not any("managedFields" in o["metadata"] for o in snap.objects)
    assert snap.counts["Pod"] == 17 and snap.counts["Node"] == 7 and snap.counts["CSIDriver"] == 0
    assert snap.server_version == "v1.34.1"


def test_a_bad_object_is_an_input_error_naming_the_list(tls: TlsFiles, tmp_path: Path) -> None:
    objs = scenario_objects()
    node = next(o for o in objs if o["kind"] == "Node" and o["metadata"]["name"] == "node-002")
    node["spec"] = {"taints": [{"key": "k", "effect": "Sometimes"}]}
    with FakeApiServer(objs, tokens={TOKEN: "alice"}, tls=tls) as srv:
        url = srv.url
        with pytest.raises(InputError) as err:
            live.load_live(str(kubeconfig(tmp_path / "kc", url, ca=tls.ca_cert)), None)
    msg = str(err.value)
    assert msg.startswith(f"{url}/api/v1/nodes: document 2: Node node-002: spec.taints[0].effect")
    assert err.value.exit_code == 2


# ---------------------------------------------------------------------------------------------- read-only
def test_the_guard_refuses_every_verb_but_get_before_sending(server: FakeApiServer, tmp_path: Path) -> None:
    kc = kubeconfig(tmp_path / "kubeconfig", server.url, ca=server.tls.ca_cert)
    client = live.LiveClient(live.resolve_source(str(kc), None))
    try:
        for method in ("POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"):
            with pytest.raises(SourceError, match=f"refused to send {method}"):
                client.api.rest_client.pool_manager.request(method, server.url + "/api/v1/nodes")
        with pytest.raises(SourceError, match="refused to send DELETE"):
            client.api.rest_client.request("DELETE", server.url + "/api/v1/namespaces/infra",
                                           headers={"Content-Type": "application/json"}, body={})
        assert server.requests == []
        assert client.get("/api/v1/nodes")["kind"] == "NodeList"
    finally:
        client.close()
    assert server.methods() == {"GET"}


# ---------------------------------------------------------------------------------------------- errors
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_server_names_the_url_quickly(tmp_path: Path) -> None:
    url = f"https://127.0.0.1:{free_port()}"
    kc = kubeconfig(tmp_path / "kubeconfig", url)
    start = time.monotonic()
    with pytest.raises(SourceError) as err:
        live.load_live(str(kc), None)
    assert time.monotonic() - start < live.CONNECT_TIMEOUT + 2
    assert f"cannot reach the API server at {url}" in str(err.value)
    assert "refused" in str(err.value) and err.value.exit_code == 2


def test_a_server_that_never_answers_is_given_up_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(live, "REQUEST_TIMEOUT", (1, 0.5))
    monkeypatch.setattr(live, "READ_TIMEOUT", 0.5)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        sock.settimeout(0.1)
        while not stop.is_set():
            try:
                accepted.append(sock.accept()[0])
            except OSError:
                pass

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    try:
        start = time.monotonic()
        with pytest.raises(SourceError, match=f"the API server at {url} did not answer GET /version"):
            live.load_live(str(kubeconfig(tmp_path / "kc", url)), None)
        assert time.monotonic() - start < 5  # one read retry at most
    finally:
        stop.set()
        t.join()
        for c in accepted:
            c.close()
        sock.close()


def test_wrong_token_is_a_401_naming_the_user(server: FakeApiServer, tmp_path: Path) -> None:
    kc = kubeconfig(tmp_path / "kubeconfig", server.url, ca=server.tls.ca_cert, user={"token": "tok-XYZ-wrong"},
                    user_name="bob")
    with pytest.raises(SourceError) as err:
        live.load_live(str(kc), None)
    msg = str(err.value)
    assert "401 Unauthorized" in msg and "user 'bob'" in msg and server.url in msg
    assert "tok-XYZ-wrong" not in msg  # the token itself is never printed


def test_forbidden_resource_is_a_403_naming_user_and_resource(tls: TlsFiles, tmp_path: Path) -> None:
    with FakeApiServer(scenario_objects(), tokens={TOKEN: "alice"}, tls=tls, forbidden={("alice", "pods")}) as srv:
        with pytest.raises(SourceError) as err:
            live.load_live(str(kubeconfig(tmp_path / "kc", srv.url, ca=tls.ca_cert)), None)
    msg = str(err.value)
    assert "user 'alice'" in msg and "may not list pods" in msg and "403 Forbidden" in msg
    assert 'User "alice" cannot list resource "pods"' in msg


def test_optional_kinds_forbidden_or_not_served_are_warnings(tls: TlsFiles, tmp_path: Path) -> None:
    with FakeApiServer(scenario_objects(), tokens={TOKEN: "alice"}, tls=tls, forbidden={("alice", "csinodes")},
                       not_served={"csidrivers"}) as srv:
        cluster = live.load_live(str(kubeconfig(tmp_path / "kc", srv.url, ca=tls.ca_cert)), None)
    assert len(cluster.nodes) == 7
    joined = "\n".join(cluster.warnings)
    assert "CSINode objects not read (csinodes.storage.k8s.io: forbidden for user 'alice'" in joined
    assert "CSIDriver objects not read (csidrivers.storage.k8s.io: not served, HTTP 404)" in joined


def test_required_kind_not_served_is_an_error(tls: TlsFiles, tmp_path: Path) -> None:
    with FakeApiServer(scenario_objects(), tokens={TOKEN: "alice"}, tls=tls, not_served={"poddisruptionbudgets"}) as srv:
        with pytest.raises(SourceError, match=re.escape("does not serve poddisruptionbudgets.policy")):
            live.load_live(str(kubeconfig(tmp_path / "kc", srv.url, ca=tls.ca_cert)), None)


def test_wrong_ca_is_a_tls_error(server: FakeApiServer, tmp_path: Path) -> None:
    kc = kubeconfig(tmp_path / "kubeconfig", server.url, ca=server.tls.other_ca_cert)
    with pytest.raises(SourceError) as err:
        live.load_live(str(kc), None)
    msg = str(err.value)
    assert f"TLS handshake with {server.url} failed" in msg and "certificate verify failed" in msg
    assert "certificate-authority of cluster 'test-cluster'" in msg
    assert server.requests == []


def test_insecure_skip_tls_verify_is_honoured_with_a_warning(server: FakeApiServer, tmp_path: Path) -> None:
    kc = kubeconfig(tmp_path / "kubeconfig", server.url, insecure=True)
    cluster = live.load_live(str(kc), None)
    assert len(cluster.pods) == 17
    assert any("is not verified" in w for w in cluster.warnings)


def test_missing_context_lists_the_contexts(server: FakeApiServer, tmp_path: Path) -> None:
    kc = kubeconfig(tmp_path / "kubeconfig", server.url, ca=server.tls.ca_cert, more_contexts=("prod", "staging"))
    with pytest.raises(SourceError) as err:
        live.load_live(str(kc), "nope")
    msg = str(err.value)
    assert "context 'nope' not found" in msg and "contexts: dev, prod, staging" in msg and str(kc) in msg
    assert server.requests == []


def test_no_current_context_asks_for_one(server: FakeApiServer, tmp_path: Path) -> None:
    kc = kubeconfig(tmp_path / "kubeconfig", server.url, ca=server.tls.ca_cert, current=None, more_contexts=("b",))
    with pytest.raises(SourceError, match=r"sets no current-context: pass --context \(contexts: dev, b\)"):
        live.load_live(str(kc), None)
    assert len(live.load_live(str(kc), "b").pods) == 17


def test_missing_kubeconfig_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope" / "config"
    with pytest.raises(SourceError, match=f"kubeconfig {missing}: no such file"):
        live.load_live(str(missing), None)


def test_nothing_configured(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match=r"no kubeconfig found: .*\.kube/config does not exist.*not a pod"):
        live.load_live(None, None)


def test_context_referring_to_a_missing_cluster(tmp_path: Path) -> None:
    kc = tmp_path / "kc"
    kc.write_text(yaml.safe_dump({"contexts": [{"name": "x", "context": {"cluster": "gone"}}], "clusters": [],
                                  "current-context": "x"}))
    with pytest.raises(SourceError, match="refers to cluster 'gone', which is not defined"):
        live.load_live(str(kc), None)


# ---------------------------------------------------------------------------------------------- resolution
def test_default_kubeconfig_in_home(server: FakeApiServer, tmp_path: Path) -> None:
    kubeconfig(tmp_path / "home" / ".kube" / "config", server.url, ca=server.tls.ca_cert)
    assert len(live.load_live(None, None).nodes) == 7


def test_kubeconfig_list_merges_as_kubectl(server: FakeApiServer, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    # first file: context "dev" (good); second: another "dev" (bad server), "other" and its own current-context
    first = kubeconfig(tmp_path / "a" / "config", server.url, ca=server.tls.ca_cert, current=None)
    second = kubeconfig(tmp_path / "b" / "config", "https://127.0.0.1:1", context="dev", current="other",
                        more_contexts=("other",), cluster="test-cluster", user={"token": "wrong"})
    missing = tmp_path / "c" / "missing"
    home_default = kubeconfig(tmp_path / "home" / ".kube" / "config", "https://127.0.0.1:2", current="dev")
    monkeypatch.setenv("KUBECONFIG", f"{missing}:{first}:{second}:{first}")
    src = live.resolve_source(None, None)
    assert src.files == [str(first), str(second)] and str(home_default) not in src.files
    assert src.context == "other"  # the first non-empty current-context: the second file's
    assert src.server == server.url  # ...but cluster "test-cluster" comes from the first file
    assert [c["name"] for c in src.config["contexts"]] == ["dev", "other"]
    assert len(live.load_live(None, "dev").pods) == 17  # user "alice" from the first file: the good token
    # an explicit --kubeconfig wins over $KUBECONFIG, alone
    assert live.resolve_source(str(second), None).server == "https://127.0.0.1:1"


def test_relative_paths_are_relative_to_the_kubeconfig(server: FakeApiServer, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "cfg"
    (folder / "pki").mkdir(parents=True)
    (folder / "pki" / "ca.crt").write_bytes(server.tls.ca_cert.read_bytes())
    (folder / "token").write_text(TOKEN)
    kc = kubeconfig(folder / "config", server.url, ca_file="pki/ca.crt", user={"tokenFile": "token"})
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert len(live.load_live(str(kc), None).nodes) == 7


def test_proxy_url_of_the_kubeconfig_is_used(tmp_path: Path) -> None:
    with FakeApiServer(scenario_objects(), tokens={TOKEN: "alice"}) as proxy:  # plain HTTP: a forward proxy
        kc = tmp_path / "kubeconfig"
        kc.write_text(yaml.safe_dump({
            "clusters": [{"name": "c", "cluster": {"server": "http://api.cluster.invalid:6443",
                                                   "proxy-url": proxy.url}}],
            "contexts": [{"name": "dev", "context": {"cluster": "c", "user": "alice"}}],
            "users": [{"name": "alice", "user": {"token": TOKEN}}], "current-context": "dev"}))
        assert len(live.load_live(str(kc), None).pods) == 17
        assert proxy.requests and {r.proxied_for for r in proxy.requests} == {"api.cluster.invalid:6443"}
        assert proxy.methods() == {"GET"}


def test_proxy_environment_as_kubectl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeApiServer(scenario_objects(), tokens={TOKEN: "alice"}) as proxy:
        kc = kubeconfig(tmp_path / "kubeconfig", "http://api.cluster.invalid:6443")
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        assert len(live.load_live(str(kc), None).nodes) == 7
        assert {r.proxied_for for r in proxy.requests} == {"api.cluster.invalid:6443"}
        monkeypatch.setenv("NO_PROXY", ".cluster.invalid")
        with pytest.raises(SourceError, match=re.escape("cannot reach the API server at http://api.cluster.invalid:6443")):
            live.load_live(str(kc), None)


def test_client_certificate_authentication(server: FakeApiServer, tmp_path: Path) -> None:
    tls = server.tls
    user = {"client-certificate-data": b64(tls.client_cert), "client-key-data": b64(tls.client_key)}
    kc = kubeconfig(tmp_path / "kubeconfig", server.url, ca=tls.ca_cert, user=user, user_name="cert-admin")
    assert len(live.load_live(str(kc), None).pods) == 17
    assert {r.user for r in server.requests} == {"cert-user"}  # the certificate's CN, no token sent


def test_exec_credential_plugin(server: FakeApiServer, tmp_path: Path) -> None:
    plugin = tmp_path / "plugin.py"
    credential = {"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
                  "status": {"token": TOKEN}}
    plugin.write_text(f"print({json.dumps(json.dumps(credential))})\n")
    user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": sys.executable,
                     "args": [str(plugin)], "interactiveMode": "Never"}}
    kc = kubeconfig(tmp_path / "kubeconfig", server.url, ca=server.tls.ca_cert, user=user)
    assert len(live.load_live(str(kc), None).pods) == 17
    assert {r.user for r in server.requests} == {"alice"}


def test_failing_exec_plugin_is_reported_with_the_401(server: FakeApiServer, tmp_path: Path) -> None:
    plugin = tmp_path / "plugin.py"
    plugin.write_text("import sys\nsys.stderr.write('login expired')\nsys.exit(3)\n")
    user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": sys.executable,
                     "args": [str(plugin)], "interactiveMode": "Never"}}
    kc = kubeconfig(tmp_path / "kubeconfig", server.url, ca=server.tls.ca_cert, user=user)
    with pytest.raises(SourceError) as err:
        live.load_live(str(kc), None)
    assert "401 Unauthorized" in str(err.value) and "credential plugin" in str(err.value)


def test_in_cluster_service_account(server: FakeApiServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sa = tmp_path / "sa"
    sa.mkdir()
    (sa / "token").write_text(TOKEN)
    (sa / "ca.crt").write_bytes(server.tls.ca_cert.read_bytes())
    monkeypatch.setattr(live, "SERVICE_ACCOUNT_DIR", str(sa))
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", str(server.port))
    src = live.resolve_source(None, None)
    assert src.in_cluster and src.server == server.url
    assert len(live.load_live(None, None).pods) == 17
    # a kubeconfig, when there is one, wins over the in-cluster configuration (as in kubectl)
    kubeconfig(tmp_path / "home" / ".kube" / "config", "https://127.0.0.1:1")
    assert not live.resolve_source(None, None).in_cluster


# ---------------------------------------------------------------------------------------------- snapshot
def cli() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def _root() -> None:
        """pysched (test harness)"""

    register(app)
    return app


@pytest.mark.parametrize("name,fmt", [("snap.yaml", None), ("snap.json", None), ("snap.out", "json"),
                                      ("snap.yaml.gz", None)])
def test_snapshot_replays_to_the_same_decisions(server: FakeApiServer, tmp_path: Path, name: str,
                                                fmt: str | None) -> None:
    kc = kubeconfig(tmp_path / "kubeconfig", server.url, ca=server.tls.ca_cert, more_contexts=("ctx2",))
    out = tmp_path / name
    args = ["snapshot", "-o", str(out), "--kubeconfig", str(kc), "--context", "ctx2"]
    if fmt:
        args += ["--format", fmt]
    res = CliRunner().invoke(cli(), args)
    assert res.exit_code == 0, res.output
    assert "wrote 29 objects" in res.output
    raw = out.read_bytes()
    text = gzip.decompress(raw).decode() if name.endswith(".gz") else raw.decode()
    is_json = name.endswith(".json") or fmt == "json"
    doc = json.loads(text) if is_json else yaml.safe_load(text)
    assert doc["kind"] == "List" and doc["apiVersion"] == "v1"
    ann = doc["metadata"]["annotations"]
    assert ann["pysched/cluster"] == "test-cluster" and ann["pysched/context"] == "ctx2"
    assert ann["pysched/server"] == server.url and ann["pysched/counts"].startswith("Node=7,Namespace=2,")
    assert ann["pysched/redacted"] == "false" and ann["pysched/time"].endswith("Z")
    if not is_json:
        head = text.split("apiVersion: v1", 1)[0]
        assert f"# replay:   pysched simulate {out}" in head
        assert "# cluster:  test-cluster" in head and "# context:  ctx2" in head and "# time:" in head
        assert "7 Node, 2 Namespace, 3 PriorityClass, 17 Pod" in head
    assert all(it.get("kind") and it.get("apiVersion") and "resourceVersion" not in it["metadata"]
               for it in doc["items"])
    assert (out.stat().st_mode & 0o777) == 0o600
    cluster = load_snapshot([str(out)])
    assert_same_cluster(cluster, load_snapshot([str(TAINTS)]))
    assert_recorded_decisions(simulate(cluster))
    assert server.methods() == {"GET"}


def test_snapshot_redacts(tls: TlsFiles, tmp_path: Path) -> None:
    objs = scenario_objects()
    pods = [o for o in objs if o["kind"] == "Pod"]
    pods[0]["metadata"].setdefault("annotations", {})["secret-note"] = "hunter2-annotation"
    pods[0]["spec"]["imagePullSecrets"] = [{"name": "registry-creds"}]
    pods[0]["spec"]["containers"][0]["env"] = [{"name": "PASSWORD", "value": "hunter2-env"},
                                               {"name": "FROM", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}]
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rs", "namespace": "infra",
                                                                      "annotations": {"a": "hunter2-rs"}},
          "spec": {"selector": {"matchLabels": {"app": "x"}},
                   "template": {"metadata": {"labels": {"app": "x"}, "annotations": {"b": "hunter2-template"}},
                                "spec": {"imagePullSecrets": [{"name": "tpl-creds"}],
                                         "containers": [{"name": "c", "image": "i",
                                                         "env": [{"name": "K", "value": "hunter2-tpl-env"}]}]}}}}
    with FakeApiServer([*objs, rs], tokens={TOKEN: "alice"}, tls=tls) as srv:
        kc = kubeconfig(tmp_path / "kubeconfig", srv.url, ca=tls.ca_cert)
        out = tmp_path / "snap.yaml"
        res = CliRunner().invoke(cli(), ["snapshot", "-o", str(out), "--kubeconfig", str(kc), "--redact", "-q"])
        assert res.exit_code == 0, res.output
    text = out.read_text()
    for secret in ("hunter2", "registry-creds", "tpl-creds"):
        assert secret not in text
    assert "# redacted: env values, annotations and imagePullSecrets" in text
    doc = yaml.safe_load(text)
    assert doc["metadata"]["annotations"]["pysched/redacted"] == "true"
    pod = next(o for o in doc["items"] if o["kind"] == "Pod" and o["metadata"]["name"] == pods[0]["metadata"]["name"])
    assert pod["metadata"]["annotations"]["secret-note"] == export.PLACEHOLDER
    assert pod["spec"]["imagePullSecrets"] == [{"name": "redacted-1"}]
    assert pod["spec"]["containers"][0]["env"] == [
        {"name": "PASSWORD", "value": export.PLACEHOLDER},
        {"name": "FROM", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}]
    tpl = next(o for o in doc["items"] if o["kind"] == "ReplicaSet")["spec"]["template"]
    assert tpl["metadata"]["annotations"] == {"b": export.PLACEHOLDER}
    assert tpl["spec"]["containers"][0]["env"][0]["value"] == export.PLACEHOLDER
    assert_recorded_decisions(simulate(load_snapshot([str(out)])))


def test_snapshot_errors_exit_2_without_traceback(tmp_path: Path) -> None:
    res = CliRunner().invoke(cli(), ["snapshot", "-o", str(tmp_path / "s.yaml"), "--kubeconfig",
                                     str(tmp_path / "missing")])
    assert res.exit_code == 2
    assert "error: kubeconfig" in res.output and "no such file" in res.output and "Traceback" not in res.output
    assert not (tmp_path / "s.yaml").exists()
    url = f"https://127.0.0.1:{free_port()}"
    res = CliRunner().invoke(cli(), ["snapshot", "-o", str(tmp_path / "s.yaml"), "--kubeconfig",
                                     str(kubeconfig(tmp_path / "kc", url))])
    assert res.exit_code == 2 and f"cannot reach the API server at {url}" in res.output


def test_progress_printer_only_on_a_terminal() -> None:
    class Tty:
        def __init__(self, tty: bool) -> None:
            self.tty, self.text = tty, ""

        def isatty(self) -> bool:
            return self.tty

        def write(self, s: str) -> None:
            self.text += s

        def flush(self) -> None:
            pass

    assert progress_printer(False, Tty(False)) is None
    assert progress_printer(True, Tty(True)) is None
    term = Tty(True)
    show = progress_printer(False, term)
    assert show is not None
    show("Pod", 500, False)
    show("Pod", 730, True)
    assert "reading Pod objects: 500" in term.text and term.text.endswith("\r\x1b[K")


def test_kubectl_accepts_the_snapshot(server: FakeApiServer, tmp_path: Path) -> None:
    """``kubectl apply --dry-run=client -f`` reads the List (against the same fake server, for discovery)."""
    import shutil
    import subprocess

    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed")
    kc = kubeconfig(tmp_path / "kubeconfig", server.url, ca=server.tls.ca_cert)
    out = tmp_path / "snap.yaml"
    assert CliRunner().invoke(cli(), ["snapshot", "-o", str(out), "--kubeconfig", str(kc), "-q"]).exit_code == 0
    env = {"HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin", "KUBECONFIG": str(kc)}
    try:
        subprocess.run([kubectl, "version", "--client"], capture_output=True, timeout=60, env=env, check=True)
    except (OSError, subprocess.SubprocessError) as e:
        pytest.skip(f"kubectl does not run here: {e}")
    proc = subprocess.run([kubectl, "apply", "--dry-run=client", "--validate=false", "-o", "name", "-f", str(out)],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout.split()) == 29
    assert server.methods() == {"GET"}
