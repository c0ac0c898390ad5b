"""Read a live cluster, read-only, and build the same :class:`Cluster` a snapshot file gives.

Source resolution is kubectl's: ``--kubeconfig PATH``, else ``$KUBECONFIG`` (a ``:``-separated list
merged as kubectl merges it: the first file to define a cluster, context or user wins, and the first
non-empty ``current-context`` wins), else ``~/.kube/config``, else the in-cluster service account.
``--context`` picks a context, else the current-context.

Transport is the official ``kubernetes`` client (TLS, client certificates, bearer tokens, exec
credential plugins, proxies as the kubeconfig says), but responses are read as raw JSON and fed to the
file loader's :func:`build_cluster`; the client's generated model classes are never built.

Only GET requests ever leave this module: a guard on the client's connection pool refuses any other
verb before it is sent. This is the only module of pysched that imports ``kubernetes``.
"""

from __future__ import annotations

import copy
import json
import logging
import os
import re
import ssl
import subprocess
import time
import types
import urllib.parse
import urllib.request
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import field
from datetime import UTC, datetime
from typing import Any, ClassVar

import urllib3
from kubernetes.client import ApiClient, Configuration
from kubernetes.client.exceptions import ApiException
from kubernetes.config import load_kube_config_from_dict
from kubernetes.config.config_exception import ConfigException
from kubernetes.config.incluster_config import InClusterConfigLoader

from pysched import __version__
from pysched.errors import SourceError
from pysched.lazyclass import dataclass
from pysched.snapshot import reader
from pysched.snapshot.cluster import Cluster
from pysched.snapshot.kinds import LISTED_LIVE, POD_FIELD_SELECTOR as POD_FIELD_SELECTOR
from pysched.snapshot.loader import Document, build_cluster

DEFAULT_KUBECONFIG = "~/.kube/config"
SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
PAGE_LIMIT = 500
# Every wait is bounded, and the messages say which bound was hit:
CONNECT_TIMEOUT = 10  # TCP connect and TLS handshake, each attempt
READ_TIMEOUT = 30  # silence while waiting for the answer or for the next bytes of it
REQUEST_DEADLINE = 60  # one request, first byte sent to last byte read (checked between chunks of the body)
REQUEST_TIMEOUT = (CONNECT_TIMEOUT, READ_TIMEOUT)
EXEC_TIMEOUT = 60  # an exec credential plugin's whole run (kubectl waits forever; a pipeline must not)
MAX_RESPONSE_BYTES = 1 << 30  # one answer; a 5,000-node page of 500 pods is a few MiB
THROTTLE_RETRIES = 3  # 429 Too Many Requests: retried this often, waiting as asked (at most MAX_RETRY_AFTER s)
MAX_RETRY_AFTER = 10
#: the longest one GET may take, retries included: what the documentation and messages promise
REQUEST_BOUND = (THROTTLE_RETRIES + 1) * (CONNECT_TIMEOUT + REQUEST_DEADLINE + READ_TIMEOUT) + \
    THROTTLE_RETRIES * MAX_RETRY_AFTER
MAX_PAGES = 100_000  # a server handing out continue tokens forever is a broken server

# (kind, count so far, this kind is complete)
ProgressFn = Callable[[str, int, bool], None]


@dataclass(frozen=True, slots=True)
class Resource:
    kind: str
    api_version: str  # "v1" or "group/version"
    plural: str
    optional: bool = False  # 403/404 is a warning, not an error
    field_selector: str | None = None

    @property
    def path(self) -> str:
        if self.api_version == "v1":
            return f"/api/v1/{self.plural}"
        return f"/apis/{self.api_version}/{self.plural}"

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]


#: what a live read lists, in order: the kinds table's entries marked ``live``
RESOURCES: tuple[Resource, ...] = tuple(
    Resource(k.kind, k.api_version, k.plural, optional=k.live.optional, field_selector=k.live.field_selector)
    for k in LISTED_LIVE if k.live is not None)


# --------------------------------------------------------------------------------------------- sources
@dataclass
class Source:
    """Where the cluster is and who we are, resolved as kubectl resolves it."""

    in_cluster: bool
    server: str
    context: str = ""
    cluster: str = ""
    user: str = ""
    files: list[str] = field(default_factory=list)  # the kubeconfig files merged, in precedence order
    config: dict = field(default_factory=dict)  # the merged kubeconfig (kubeconfig sources only)
    token_file: str = ""  # in-cluster
    ca_file: str = ""  # in-cluster

    def describe_user(self) -> str:
        if self.in_cluster:
            return f"the pod's service account (token {self.token_file})"
        return f"user {self.user!r} (context {self.context!r})" if self.user else \
            f"no user (context {self.context!r} names none: anonymous)"

    def where(self) -> str:
        return "the in-cluster configuration" if self.in_cluster else _files_text(self.files)


def _files_text(files: list[str]) -> str:
    return files[0] if len(files) == 1 else "$KUBECONFIG (" + ", ".join(files) + ")"


def kubeconfig_files(kubeconfig: str | None, environ: Mapping[str, str] | None = None) -> tuple[list[str], str]:
    """The kubeconfig files that exist, in precedence order, and how they were chosen.

    kubectl: an explicit path must exist; the ``$KUBECONFIG`` list is deduplicated and files that do not
    exist are skipped; the default is ``~/.kube/config``.
    """
    env = os.environ if environ is None else environ
    if kubeconfig:
        if not os.path.exists(kubeconfig):
            raise SourceError(f"kubeconfig {kubeconfig}: no such file (given with --kubeconfig)")
        if os.path.isdir(kubeconfig):
            raise SourceError(f"kubeconfig {kubeconfig}: is a folder, not a file (given with --kubeconfig)")
        return [kubeconfig], "--kubeconfig"
    listed = env.get("KUBECONFIG", "")
    if listed:
        seen: list[str] = []
        for p in listed.split(os.pathsep):
            if p and p not in seen:
                seen.append(p)
        return [p for p in seen if os.path.isfile(p)], "$KUBECONFIG=" + listed
    default = os.path.expanduser(DEFAULT_KUBECONFIG)
    return ([default] if os.path.isfile(default) else []), default


MAX_KUBECONFIG_BYTES = 16 << 20


def _read_kubeconfig(path: str) -> dict:
    """One kubeconfig through the bounded reader: regular files only, size, aliases, nesting, duplicate keys."""
    text = reader.read_text(path, MAX_KUBECONFIG_BYTES, error=SourceError, what="kubeconfig", raise_hint="")
    docs = reader.load_yaml_one(text, path, error=SourceError)
    if not docs:
        return {}
    if len(docs) > 1:
        raise SourceError(f"kubeconfig {path}: expected one YAML document (a Config), found {len(docs)}")
    data = docs[0]
    if not isinstance(data, dict):
        raise SourceError(f"kubeconfig {path}: expected a Config mapping, got {type(data).__name__}")
    return data


def _resolve_paths(entry: dict, section: str, base: str) -> None:
    """kubectl's ``ResolveLocalPaths``: file references relative to the file that defines them."""
    body = entry.get("cluster" if section == "clusters" else "user")
    if not isinstance(body, dict):
        return
    keys = ("certificate-authority",) if section == "clusters" else ("client-certificate", "client-key",
                                                                      "tokenFile")
    for key in keys:
        value = body.get(key)
        if isinstance(value, str) and value and not os.path.isabs(value):
            body[key] = os.path.join(base, value)
    exec_ = body.get("exec") if section == "users" else None
    if isinstance(exec_, dict):
        cmd = exec_.get("command")
        if isinstance(cmd, str) and os.sep in cmd and not os.path.isabs(cmd):
            exec_["command"] = os.path.join(base, cmd)


def merge_kubeconfigs(files: list[str]) -> dict:
    """Merge as kubectl does: per name, the first file's cluster/context/user wins as a whole; the first
    non-empty current-context wins."""
    merged: dict[str, Any] = {"apiVersion": "v1", "kind": "Config", "clusters": [], "contexts": [],
                              "users": [], "current-context": ""}
    names: dict[str, set[str]] = {"clusters": set(), "contexts": set(), "users": set()}
    for path in files:
        data = _read_kubeconfig(path)
        base = os.path.dirname(os.path.abspath(path))
        for section in ("clusters", "contexts", "users"):
            entries = data.get(section) or []
            if not isinstance(entries, list):
                raise SourceError(f"kubeconfig {path}: {section}: expected a list")
            for i, entry in enumerate(entries):
                if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                    raise SourceError(f"kubeconfig {path}: {section}[{i}]: expected a mapping with a name")
                if entry["name"] in names[section]:
                    continue
                names[section].add(entry["name"])
                entry = copy.deepcopy(entry)
                _resolve_paths(entry, section, base)
                merged[section].append(entry)
        current = data.get("current-context")
        if not merged["current-context"] and isinstance(current, str) and current:
            merged["current-context"] = current
    return merged


def _named(config: dict, section: str, name: str) -> dict | None:
    for entry in config.get(section, []):
        if entry.get("name") == name:
            return entry
    return None


def _names(config: dict, section: str) -> str:
    names = [e["name"] for e in config.get(section, [])]
    return ", ".join(names) if names else "none"


def in_cluster_possible(environ: Mapping[str, str] | None = None) -> bool:
    """kubectl's ``inClusterClientConfig.Possible``."""
    env = os.environ if environ is None else environ
    token = os.path.join(SERVICE_ACCOUNT_DIR, "token")
    return bool(env.get("KUBERNETES_SERVICE_HOST")) and bool(env.get("KUBERNETES_SERVICE_PORT")) and \
        os.path.isfile(token)


def resolve_source(kubeconfig: str | None = None, context: str | None = None,
                   environ: Mapping[str, str] | None = None) -> Source:
    """Which cluster, context and user kubectl would use with these flags and this environment."""
    env = os.environ if environ is None else environ
    files, how = kubeconfig_files(kubeconfig, env)
    config = merge_kubeconfigs(files) if files else {}
    empty = not any(config.get(s) for s in ("clusters", "contexts", "users"))
    if empty:
        if context:
            where = _files_text(files) if files else how
            raise SourceError(f"context {context!r} not found: no kubeconfig defines any context ({where})")
        if in_cluster_possible(env):
            host, port = env["KUBERNETES_SERVICE_HOST"], env["KUBERNETES_SERVICE_PORT"]
            if ":" in host and not host.startswith("["):
                host = f"[{host}]"
            return Source(in_cluster=True, server=f"https://{host}:{port}", context="in-cluster",
                          cluster="in-cluster", user="serviceaccount",
                          token_file=os.path.join(SERVICE_ACCOUNT_DIR, "token"),
                          ca_file=os.path.join(SERVICE_ACCOUNT_DIR, "ca.crt"))
        if files:
            raise SourceError(f"kubeconfig {_files_text(files)} is empty: it defines no cluster, context or user")
        if how.startswith("$KUBECONFIG"):
            raise SourceError(f"no kubeconfig found: none of the files in {how} exists, and this is not a pod "
                              f"(KUBERNETES_SERVICE_HOST is not set)")
        raise SourceError(f"no kubeconfig found: --kubeconfig not given, $KUBECONFIG not set, {how} does not "
                          f"exist, and this is not a pod (KUBERNETES_SERVICE_HOST is not set); pass a "
                          f"snapshot file or --kubeconfig")
    where = _files_text(files)
    name = context or config.get("current-context") or ""
    if not name:
        raise SourceError(f"kubeconfig {where} sets no current-context: pass --context "
                          f"(contexts: {_names(config, 'contexts')})")
    ctx = _named(config, "contexts", name)
    if ctx is None:
        current = config.get("current-context")
        cur = f"; current-context: {current}" if current else ""
        raise SourceError(f"context {name!r} not found in kubeconfig {where} (contexts: "
                          f"{_names(config, 'contexts')}{cur})")
    body = ctx.get("context")
    if not isinstance(body, dict):
        raise SourceError(f"kubeconfig {where}: context {name!r} has no 'context' mapping")
    cluster_name = body.get("cluster") or ""
    if not cluster_name:
        raise SourceError(f"kubeconfig {where}: context {name!r} names no cluster")
    cluster = _named(config, "clusters", cluster_name)
    if cluster is None:
        raise SourceError(f"kubeconfig {where}: context {name!r} refers to cluster {cluster_name!r}, which is "
                          f"not defined (clusters: {_names(config, 'clusters')})")
    user_name = body.get("user") or ""
    if user_name and _named(config, "users", user_name) is None:
        raise SourceError(f"kubeconfig {where}: context {name!r} refers to user {user_name!r}, which is not "
                          f"defined (users: {_names(config, 'users')})")
    server = (cluster.get("cluster") or {}).get("server") if isinstance(cluster.get("cluster"), dict) else None
    if not isinstance(server, str) or not server:
        raise SourceError(f"kubeconfig {where}: cluster {cluster_name!r} has no server")
    if not server.startswith(("https://", "http://")):
        raise SourceError(f"kubeconfig {where}: cluster {cluster_name!r}: server {server!r} is not an "
                          f"http(s) URL")
    return Source(in_cluster=False, server=server.rstrip("/"), context=name, cluster=cluster_name,
                  user=user_name, files=files, config=config)


# --------------------------------------------------------------------------------------------- client
class _HttpStatus(Exception):
    """A non-200 answer; mapped to a SourceError (or a warning) by the caller that knows the resource."""

    def __init__(self, status: int, body: bytes, path: str) -> None:
        super().__init__(f"HTTP {status} for {path}")
        self.status = status
        self.body = body
        self.path = path

    def server_message(self) -> str:
        try:
            doc = json.loads(self.body)
        except (ValueError, TypeError):
            text = self.body.decode("utf-8", "replace").strip() if isinstance(self.body, bytes) else ""
            return text[:300]
        if isinstance(doc, dict) and isinstance(doc.get("message"), str):
            return doc["message"]
        return ""


def _install_get_only_guard(api: ApiClient) -> None:
    """Refuse, before anything is sent, every request of this client that is not a GET."""
    pool = api.rest_client.pool_manager
    send = pool.urlopen

    def urlopen(method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        if str(method).upper() != "GET":
            raise SourceError(f"refused to send {method} {url}: pysched only reads from a cluster (GET)")
        return send(method, url, *args, **kwargs)

    pool.urlopen = urlopen


@contextmanager
def _client_log_capture(notes: list[str]) -> Iterator[None]:
    """The client logs credential-plugin failures on the root logger; keep them for our own message."""

    class _Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            notes.append(record.getMessage())

    root = logging.getLogger()
    handler = _Keep(logging.WARNING)
    root.addHandler(handler)
    try:
        yield
    finally:
        root.removeHandler(handler)


def _proxy_for(source: Source) -> str | None:
    """kubectl's proxy: the cluster's proxy-url, else $HTTPS_PROXY/$HTTP_PROXY unless $NO_PROXY covers it."""
    cluster = _named(source.config, "clusters", source.cluster) or {}
    body = cluster.get("cluster")
    if not isinstance(body, dict):
        body = {}
    if isinstance(body.get("proxy-url"), str) and body["proxy-url"]:
        return body["proxy-url"]
    host = urllib.parse.urlsplit(source.server).hostname or ""
    proxies = urllib.request.getproxies_environment()
    if not host or urllib.request.proxy_bypass_environment(host, proxies):  # type: ignore[attr-defined]  # not in the stubs
        return None
    return proxies.get(urllib.parse.urlsplit(source.server).scheme) or None


def _retries() -> urllib3.util.Retry:
    # no transport retries: a retried read timeout doubled the wait the message stated (urllib3 drops a
    # stale keep-alive connection before reusing it); only 429s are retried, by LiveClient.get
    return urllib3.util.Retry(total=0, connect=0, read=0, status=0, other=0, redirect=0,
                              raise_on_redirect=True, raise_on_status=False)


class _Deadline(Exception):
    """A request that went past REQUEST_DEADLINE (or MAX_RESPONSE_BYTES) while its body was read."""


def _read_body(raw: Any, started: float) -> bytes:
    """The body of a urllib3 response read in chunks: each chunk waits at most READ_TIMEOUT (the socket's
    timeout), and the whole request is abandoned past REQUEST_DEADLINE or MAX_RESPONSE_BYTES."""
    if not hasattr(raw, "stream"):
        return raw.read() or b""
    parts: list[bytes] = []
    size = 0
    # read1 returns what has arrived (at most one socket read), so the deadline is checked as bytes drip in
    chunks = iter(lambda: raw.read1(1 << 16), b"") if hasattr(raw, "read1") else raw.stream(1 << 16)
    try:
        for chunk in chunks:
            parts.append(chunk)
            size += len(chunk)
            if size > MAX_RESPONSE_BYTES:
                raise _Deadline(f"an answer of more than {MAX_RESPONSE_BYTES} bytes")
            if time.monotonic() - started > REQUEST_DEADLINE:
                raise _Deadline(f"no complete answer within {REQUEST_DEADLINE} s ({size} bytes read)")
    finally:
        raw.release_conn()
    return b"".join(parts)


class _BoundedPopen(subprocess.Popen):
    """The exec credential plugin's process, killed after EXEC_TIMEOUT (the client would wait forever)."""

    timed_out: ClassVar[list[str]] = []

    def communicate(self, input: Any = None, timeout: float | None = None) -> Any:
        try:
            return super().communicate(input, timeout=EXEC_TIMEOUT if timeout is None else timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            super().communicate()
            args = self.args if isinstance(self.args, list | tuple) else [self.args]
            _BoundedPopen.timed_out.append(" ".join(str(a) for a in args)[:200])
            raise


@contextmanager
def _bounded_exec_plugins() -> Iterator[None]:
    """Exec credential plugins run by the client (at load and on token refresh) under EXEC_TIMEOUT."""
    from kubernetes.config import exec_provider

    shim = types.ModuleType("subprocess")
    shim.__dict__.update(subprocess.__dict__)
    shim.Popen = _BoundedPopen  # type: ignore[attr-defined]
    saved = exec_provider.subprocess
    exec_provider.subprocess = shim
    try:
        yield
    finally:
        exec_provider.subprocess = saved


def _exec_timeout_error(source: Source) -> SourceError | None:
    if not _BoundedPopen.timed_out:
        return None
    cmd = _BoundedPopen.timed_out[-1]
    _BoundedPopen.timed_out.clear()
    return SourceError(f"credentials of {source.describe_user()}: the exec credential plugin ({cmd}) did not "
                       f"finish within {EXEC_TIMEOUT} s and was stopped")


class LiveClient:
    """A dedicated ``Configuration`` + ``ApiClient`` for one source; GET only; raw JSON."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.auth_notes: list[str] = []
        self.warnings: list[str] = []
        cfg = Configuration()
        cfg.retries = _retries()
        _BoundedPopen.timed_out.clear()
        try:
            with _client_log_capture(self.auth_notes), warnings.catch_warnings(), _bounded_exec_plugins():
                warnings.simplefilter("ignore")
                if source.in_cluster:
                    InClusterConfigLoader(token_filename=source.token_file,
                                          cert_filename=source.ca_file).load_and_set(cfg)
                    api = ApiClient(configuration=cfg)
                else:
                    load_kube_config_from_dict(config_dict=copy.deepcopy(source.config), context=source.context,
                                               client_configuration=cfg, persist_config=False)
                    if not cfg.proxy:  # clients before v35 ignore proxy-url and the proxy environment
                        cfg.proxy = _proxy_for(source)
                    api = ApiClient(configuration=cfg)
        except ConfigException as e:
            raise SourceError(f"{source.where()}: context {source.context!r}: {e}") from None
        except (OSError, ValueError, TypeError, KeyError) as e:
            raise SourceError(f"{source.where()}: context {source.context!r}: cannot set up the client: "
                              f"{type(e).__name__}: {e}") from None
        timed_out = _exec_timeout_error(source)
        if timed_out is not None:
            raise timed_out
        api.user_agent = f"pysched/{__version__} (read-only)"
        _install_get_only_guard(api)
        self.api = api
        self.config = cfg
        if cfg.verify_ssl is False:
            self.warnings.append(f"TLS certificate of {source.server} is not verified "
                                 f"(insecure-skip-tls-verify in cluster {source.cluster!r})")
        for note in self.auth_notes:
            self.warnings.append(f"credentials of {source.describe_user()}: {note}")

    def close(self) -> None:
        try:
            self.api.close()
        except Exception:
            pass

    # -------------------------------------------------------------- one GET
    def _send(self, path: str, query: list[tuple[str, str]]) -> tuple[int, bytes, str]:
        """One GET: (status, body, Retry-After header)."""
        api = self.api
        headers = {"Accept": "application/json", "Accept-Encoding": "gzip"}
        if hasattr(api, "param_serialize"):  # clients generated by openapi-generator 7
            method, url, hdrs, _body, _post = api.param_serialize(
                method="GET", resource_path=path, query_params=query, header_params=headers,
                auth_settings=["BearerToken"])
            started = time.monotonic()
            resp = api.call_api(method, url, header_params=hdrs, _request_timeout=REQUEST_TIMEOUT)
            raw = getattr(resp, "response", None)
            data = _read_body(raw, started) if raw is not None else resp.read()
            return resp.status, data or b"", resp.headers.get("Retry-After") or ""
        started = time.monotonic()
        try:  # older clients (tested with v31): the raw urllib3 response
            resp = api.call_api(path, "GET", query_params=query, header_params=headers,
                                auth_settings=["BearerToken"], _preload_content=False,
                                _request_timeout=REQUEST_TIMEOUT, _return_http_data_only=True)
        except ApiException as e:
            if e.status:
                body = e.body if isinstance(e.body, bytes) else (e.body or "").encode()
                return e.status, body, (e.headers or {}).get("Retry-After") or ""
            raise
        return resp.status, _read_body(resp, started), resp.headers.get("Retry-After") or ""

    def get(self, path: str, query: list[tuple[str, str]] | None = None) -> dict:
        """GET ``path``; the decoded JSON object on 200, :class:`_HttpStatus` otherwise. A 429 (or a 5xx
        with Retry-After) is retried a few times after the wait the server asks for, capped."""
        for attempt in range(THROTTLE_RETRIES + 1):
            try:
                with warnings.catch_warnings(), _bounded_exec_plugins():
                    warnings.simplefilter("ignore", urllib3.exceptions.InsecureRequestWarning)
                    status, body, retry_after = self._send(path, query or [])
            except SourceError:
                raise
            except _Deadline as e:
                raise SourceError(f"the API server at {self.source.server} gave {e} for GET {path}; "
                                  f"given up") from None
            except Exception as e:
                raise self._exec_or_transport_error(e, path) from None
            throttled = status == 429 or (status >= 500 and retry_after)
            if not throttled or attempt == THROTTLE_RETRIES:
                break
            time.sleep(_retry_after_seconds(retry_after))
        if status != 200:
            raise _HttpStatus(status, body, path)
        try:
            doc = json.loads(body)
        except ValueError:
            raise SourceError(f"{self.source.server}{path}: the answer is not JSON (is {self.source.server} "
                              f"a Kubernetes API server?)") from None
        if not isinstance(doc, dict):
            raise SourceError(f"{self.source.server}{path}: expected a JSON object, got {type(doc).__name__}")
        return doc

    def _exec_or_transport_error(self, e: BaseException, path: str) -> SourceError:
        return _exec_timeout_error(self.source) or self._transport_error(e, path)

    def _transport_error(self, e: BaseException, path: str) -> SourceError:
        server = self.source.server
        ctx = "" if self.source.in_cluster else f" (context {self.source.context!r})"
        reason: BaseException = e
        if isinstance(e, urllib3.exceptions.MaxRetryError) and e.reason is not None:
            reason = e.reason
        text = str(reason)
        if isinstance(e, ApiException) and not e.status:
            text = str(e.reason or e)
            if text.startswith("SSLError") or "SSL" in text or "certificate" in text:
                return SourceError(f"TLS handshake with {server} failed{ctx}: {_tls_detail(e, text)}; check the "
                                   f"certificate-authority of cluster {self.source.cluster!r} in "
                                   f"{self.source.where()}")
            return SourceError(f"cannot read {server}{path}{ctx}: {text}")
        if isinstance(e, ConfigException):
            return SourceError(f"credentials of {self.source.describe_user()}: {e}")
        if isinstance(reason, (urllib3.exceptions.SSLError, ssl.SSLError)):
            return SourceError(f"TLS handshake with {server} failed{ctx}: {_tls_detail(reason, text)}; check the "
                               f"certificate-authority of cluster {self.source.cluster!r} in "
                               f"{self.source.where()}")
        if isinstance(reason, urllib3.exceptions.ProxyError):
            return SourceError(f"cannot reach the API server at {server} through proxy {self.config.proxy}"
                               f"{ctx}: {text}")
        if isinstance(reason, urllib3.exceptions.NewConnectionError):
            why = text.split("Failed to establish a new connection: ", 1)[-1]
            cause = reason.__cause__
            if isinstance(cause, OSError) and cause.errno and cause.strerror:
                why = f"{cause.strerror.lower()} (errno {cause.errno})"
            return SourceError(f"cannot reach the API server at {server}{ctx}: {why}")
        if isinstance(reason, urllib3.exceptions.ConnectTimeoutError):
            return SourceError(f"cannot reach the API server at {server}{ctx}: no connection (TCP and TLS "
                               f"handshake) within {CONNECT_TIMEOUT} s")
        if isinstance(reason, urllib3.exceptions.ReadTimeoutError):
            m = re.search(r"read timeout=([0-9.]+)", text)
            waited = float(m.group(1)) if m else float(READ_TIMEOUT)
            shown = f"{waited:g}"
            if server.startswith("https://") and waited == CONNECT_TIMEOUT != READ_TIMEOUT:
                # urllib3 reports a stalled TLS handshake as a read timeout of the connect timeout
                return SourceError(f"the API server at {server} accepted the connection but the TLS handshake did "
                                   f"not complete within {shown} s; given up (no retries)")
            return SourceError(f"the API server at {server} did not answer GET {path}: {shown} s without a byte; "
                               f"given up (no retries)")
        if isinstance(reason, urllib3.exceptions.ResponseError) or "redirect" in text.lower():
            return SourceError(f"the API server at {server} answered GET {path} with a redirect; pysched "
                               f"does not follow redirects")
        if isinstance(reason, (urllib3.exceptions.ProtocolError, ConnectionError)):
            return SourceError(f"the connection to {server} broke while reading {path}{ctx}: {text}")
        if isinstance(reason, urllib3.exceptions.LocationParseError):
            return SourceError(f"server {server!r}{ctx} is not a valid URL: {text}")
        return SourceError(f"cannot read {server}{path}{ctx}: {type(reason).__name__}: {text}")

    def status_error(self, err: _HttpStatus, what: str) -> SourceError:
        server = self.source.server
        msg = err.server_message()
        detail = f": {msg}" if msg else ""
        if err.status == 401:
            notes = f" (credential plugin: {'; '.join(self.auth_notes)})" if self.auth_notes else ""
            return SourceError(f"the API server at {server} rejected the credentials of "
                               f"{self.source.describe_user()}: 401 Unauthorized while listing {what} "
                               f"(GET {err.path}){notes}")
        if err.status == 403:
            return SourceError(f"{self.source.describe_user()} may not list {what} at {server}: 403 Forbidden "
                               f"(GET {err.path}){detail}")
        if err.status == 404:
            return SourceError(f"the API server at {server} does not serve {what} (GET {err.path}: 404 Not "
                               f"Found)")
        return SourceError(f"the API server at {server} answered GET {err.path} with HTTP {err.status}{detail}")

    # -------------------------------------------------------------- paginated lists
    def list(self, res: Resource, progress: ProgressFn | None = None) -> list[dict]:
        """Every object of ``res`` at cluster scope, ``limit``/``continue`` paginated, with kind/apiVersion
        set on each item and ``metadata.managedFields`` dropped (as ``kubectl get`` prints them)."""
        base: list[tuple[str, str]] = []
        if res.field_selector:
            base.append(("fieldSelector", res.field_selector))
        items: list[dict] = []
        token = ""
        full_list = False
        for _page in range(MAX_PAGES):
            query = list(base)
            if not full_list:
                query.append(("limit", str(PAGE_LIMIT)))
            if token:
                query.append(("continue", token))
            try:
                doc = self.get(res.path, query)
            except _HttpStatus as err:
                if err.status == 410 and token:
                    # the continue token expired: one complete list, as client-go's pager does
                    items, token, full_list = [], "", True
                    continue
                raise
            page = doc.get("items") or []
            if not isinstance(page, list):
                raise SourceError(f"{self.source.server}{res.path}: 'items' is not a list")
            for item in page:
                if isinstance(item, dict):
                    meta = item.get("metadata")
                    if isinstance(meta, dict):
                        meta.pop("managedFields", None)
                    item.pop("kind", None)
                    item.pop("apiVersion", None)
                    items.append({"apiVersion": res.api_version, "kind": res.kind, **item})
            listmeta = doc.get("metadata")
            nxt = (listmeta.get("continue") if isinstance(listmeta, dict) else None) or ""
            if nxt and nxt == token:
                raise SourceError(f"{self.source.server}{res.path}: the server repeats the same continue token")
            token = "" if full_list else nxt
            if progress is not None:
                progress(res.kind, len(items), not token)
            if not token:
                return items
        raise SourceError(f"{self.source.server}{res.path}: more than {MAX_PAGES} pages")


def _retry_after_seconds(value: str) -> float:
    try:
        return min(max(float(value), 0.0), MAX_RETRY_AFTER)
    except ValueError:
        return 1.0


def _tls_detail(exc: BaseException, text: str) -> str:
    """The reason of a TLS failure in a few words: the OpenSSL verify message when there is one."""
    seen: set[int] = set()
    stack: list[object] = [exc]
    while stack:
        cur = stack.pop()
        if not isinstance(cur, BaseException) or id(cur) in seen:
            continue
        seen.add(id(cur))
        if isinstance(cur, ssl.SSLCertVerificationError):
            return f"certificate verify failed: {cur.verify_message}"
        if isinstance(cur, ssl.SSLError) and cur.reason:
            return str(cur.reason).replace("_", " ").lower()
        stack.extend([cur.__cause__, cur.__context__, *cur.args])
    i = text.find("certificate verify failed")
    if i >= 0:
        return text[i:].split(" (_ssl", 1)[0].strip(" ()'\"")
    return text.strip()[:300]


# --------------------------------------------------------------------------------------------- reading
@dataclass
class LiveSnapshot:
    """Everything read from a cluster: the objects (kind/apiVersion set) in resource order, and where."""

    source: Source
    objects: list[dict]
    counts: dict[str, int]  # kind -> objects read (every kind listed, optional kinds that failed: absent)
    taken_at: datetime
    server_version: str = ""
    warnings: list[str] = field(default_factory=list)
    paths: dict[str, str] = field(default_factory=dict)  # kind -> API path


def read_live(kubeconfig: str | None = None, context: str | None = None,
              progress: ProgressFn | None = None, resources: tuple[Resource, ...] = RESOURCES) -> LiveSnapshot:
    """List every resource the simulation reads; GET only."""
    source = resolve_source(kubeconfig, context)
    client = LiveClient(source)
    try:
        taken_at = datetime.now(UTC).replace(microsecond=0)
        version = ""
        try:
            v = client.get("/version")
            version = str(v.get("gitVersion") or "")
        except _HttpStatus:
            pass  # /version is informational: the lists below say what is wrong, naming the resource
        objects: list[dict] = []
        counts: dict[str, int] = {}
        warns = list(client.warnings)
        paths: dict[str, str] = {}
        for res in resources:
            what = _plural_text(res)
            try:
                items = client.list(res, progress)
            except _HttpStatus as err:
                if res.optional and err.status in (403, 404):
                    why = "not served" if err.status == 404 else f"forbidden for {source.describe_user()}"
                    warns.append(f"{res.kind} objects not read ({what}: {why}, HTTP {err.status}); the "
                                 f"simulation proceeds without them")
                    if progress is not None:
                        progress(res.kind, 0, True)
                    continue
                raise client.status_error(err, what) from None
            objects.extend(items)
            counts[res.kind] = len(items)
            paths[res.kind] = res.path
        return LiveSnapshot(source, objects, counts, taken_at, version, warns, paths)
    finally:
        client.close()


def _plural_text(res: Resource) -> str:
    return f"{res.plural}" if not res.group else f"{res.plural}.{res.group}"


def cluster_from_live(snap: LiveSnapshot, strict: bool = False, validate: str | None = None) -> Cluster:
    """The file loader's admission on the objects read: same parsing, same errors, same Cluster. An error
    names the list it came from and the item's number in it (``https://…/api/v1/pods: document 12``)."""
    counters: dict[str, int] = {}
    docs: list[tuple[Document, dict, str]] = []
    for obj in snap.objects:
        kind = obj.get("kind", "")
        counters[kind] = counters.get(kind, 0) + 1
        src = f"{snap.source.server}{snap.paths.get(kind, '')}"
        docs.append((Document(src, counters[kind], obj, None), obj, ""))
    cluster = build_cluster(docs, strict=strict, validate=validate)
    cluster.sources = [snap.source.server]
    cluster.warnings[:0] = snap.warnings
    return cluster


def load_live(kubeconfig: str | None = None, context: str | None = None,
              progress: ProgressFn | None = None, *, strict: bool = False, validate: str | None = None) -> Cluster:
    """Read a live cluster (read-only) into the same :class:`Cluster` the file loader builds."""
    return cluster_from_live(read_live(kubeconfig, context, progress), strict=strict, validate=validate)
