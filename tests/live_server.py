"""A small, real Kubernetes API server for tests: HTTP(S) on 127.0.0.1 in a thread, serving LIST requests.

It speaks the list protocol the way kube-apiserver does: ``/version``, ``/api``, ``/apis`` and per-group
discovery, ``/api/v1/<plural>`` and ``/apis/<group>/<version>/<plural>`` at cluster scope, ``*List``
answers whose items carry no kind/apiVersion, ``limit``/``continue`` pagination (``410 Gone`` for an
expired token), ``fieldSelector`` on pods, bearer-token and client-certificate authentication
(``401``/``403`` with a ``Status`` body), gzip when asked. Every request is recorded.
"""

from __future__ import annotations

import base64
import datetime
import gzip
import ipaddress
import json
import shutil
import socket
import ssl
import subprocess
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

# kind -> (group, version, plural, namespaced)
KINDS: dict[str, tuple[str, str, str, bool]] = {
    "Node": ("", "v1", "nodes", False),
    "Namespace": ("", "v1", "namespaces", False),
    "Pod": ("", "v1", "pods", True),
    "Service": ("", "v1", "services", True),
    "ReplicationController": ("", "v1", "replicationcontrollers", True),
    "PersistentVolume": ("", "v1", "persistentvolumes", False),
    "PersistentVolumeClaim": ("", "v1", "persistentvolumeclaims", True),
    "PriorityClass": ("scheduling.k8s.io", "v1", "priorityclasses", False),
    "PodDisruptionBudget": ("policy", "v1", "poddisruptionbudgets", True),
    "ReplicaSet": ("apps", "v1", "replicasets", True),
    "StatefulSet": ("apps", "v1", "statefulsets", True),
    "Deployment": ("apps", "v1", "deployments", True),
    "DaemonSet": ("apps", "v1", "daemonsets", True),
    "Job": ("batch", "v1", "jobs", True),
    "CronJob": ("batch", "v1", "cronjobs", True),
    "LimitRange": ("", "v1", "limitranges", True),
    "StorageClass": ("storage.k8s.io", "v1", "storageclasses", False),
    "CSINode": ("storage.k8s.io", "v1", "csinodes", False),
    "CSIDriver": ("storage.k8s.io", "v1", "csidrivers", False),
    "VolumeAttachment": ("storage.k8s.io", "v1", "volumeattachments", False),
    "CSIStorageCapacity": ("storage.k8s.io", "v1", "csistoragecapacities", True),
    "RuntimeClass": ("node.k8s.io", "v1", "runtimeclasses", False),
    "DeviceClass": ("resource.k8s.io", "v1", "deviceclasses", False),
    "ResourceSlice": ("resource.k8s.io", "v1", "resourceslices", False),
    "ResourceClaim": ("resource.k8s.io", "v1", "resourceclaims", True),
    "ResourceClaimTemplate": ("resource.k8s.io", "v1", "resourceclaimtemplates", True),
}
SELECTABLE_POD_FIELDS = {"status.phase", "spec.nodeName", "metadata.name", "metadata.namespace",
                         "spec.schedulerName"}


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    user: str | None
    status: int = 0
    proxied_for: str = ""  # the host of an absolute request-target: the request came as to a proxy


@dataclass
class FakeApiServer:
    """Serve ``objects`` (any kinds of :data:`KINDS`, in the given order within each kind)."""

    objects: list[dict]
    tokens: dict[str, str] = field(default_factory=dict)  # bearer token -> user name
    forbidden: set[tuple[str, str]] = field(default_factory=set)  # (user, plural) -> 403
    not_served: set[str] = field(default_factory=set)  # plurals answered with 404
    page_cap: int | None = None  # answer fewer items than ``limit`` (servers may)
    expire_continue: int = 0  # answer this many continue requests with 410 Gone
    throttle: int = 0  # answer this many list requests with 429 Too Many Requests (Retry-After: 0)
    tls: TlsFiles | None = None
    version: str = "v1.34.1"
    requests: list[Request] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.by_path: dict[str, list[dict]] = {}
        for group, version, plural, _ns in KINDS.values():
            self.by_path[_path(group, version, plural)] = []
        for obj in self.objects:
            group, version, plural, _ns = KINDS[obj["kind"]]
            item = {k: v for k, v in obj.items() if k not in ("kind", "apiVersion")}
            self.by_path[_path(group, version, plural)].append(json.loads(json.dumps(item)))
        self.rv = 1000 + len(self.objects)
        self.lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ---------------------------------------------------------------- lifecycle
    def start(self) -> FakeApiServer:
        server = self
        handler = type("Handler", (_Handler,), {"api": server})
        httpd = _Server(("127.0.0.1", 0), handler)
        if self.tls is not None:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(self.tls.server_cert, self.tls.server_key)
            ctx.load_verify_locations(self.tls.ca_cert)
            ctx.verify_mode = ssl.CERT_OPTIONAL
            httpd.ssl_context = ctx
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FakeApiServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    def methods(self) -> set[str]:
        return {r.method for r in self.requests}

    def requests_for(self, path: str) -> list[Request]:
        return [r for r in self.requests if r.path == path]

    # ---------------------------------------------------------------- the API
    def handle(self, method: str, raw_path: str, headers: dict[str, str], peer_cn: str | None
               ) -> tuple[int, dict]:
        parts = urlsplit(raw_path)
        path = unquote(parts.path).rstrip("/") or "/"
        query = {k: v[0] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        user = self._authenticate(headers.get("authorization", ""), peer_cn)
        req = Request(method, path, query, user, proxied_for=parts.netloc)
        with self.lock:
            self.requests.append(req)
        status, body = self._route(method, path, query, user)
        req.status = status
        return status, body

    def _authenticate(self, header: str, peer_cn: str | None) -> str | None:
        if header.lower().startswith("bearer "):
            return self.tokens.get(header[7:].strip())
        if peer_cn:
            return peer_cn
        return None

    def _route(self, method: str, path: str, query: dict[str, str], user: str | None) -> tuple[int, dict]:
        if method != "GET":
            return 405, status_body(405, "MethodNotAllowed", f"{method} is not allowed here")
        if path == "/version":
            return 200, {"major": "1", "minor": "34", "gitVersion": self.version, "platform": "linux/amd64"}
        if user is None:
            return 401, status_body(401, "Unauthorized", "Unauthorized")
        if path == "/api":
            return 200, {"kind": "APIVersions", "versions": ["v1"],
                         "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]}
        if path == "/apis":
            groups = sorted({g for g, _v, _p, _n in KINDS.values() if g})
            return 200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": [
                {"name": g, "versions": [{"groupVersion": f"{g}/v1", "version": "v1"}],
                 "preferredVersion": {"groupVersion": f"{g}/v1", "version": "v1"}} for g in groups]}
        for kind, (group, version, plural, namespaced) in KINDS.items():
            gv = f"{group}/{version}" if group else version
            if path == _discovery_path(group, version):
                return 200, {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv,
                             "resources": [
                                 {"name": p, "singularName": k.lower(), "namespaced": n, "kind": k,
                                  "verbs": ["get", "list", "watch"]}
                                 for k, (g2, v2, p, n) in KINDS.items() if (g2, v2) == (group, version)
                                 and p not in self.not_served]}
            if path == _path(group, version, plural):
                return self._list(kind, gv, plural, query, user)
            if namespaced and path.startswith(_prefix(group, version) + "/namespaces/"):
                rest = path[len(_prefix(group, version) + "/namespaces/"):].split("/")
                if len(rest) == 3 and rest[1] == plural:
                    return self._get_one(plural, rest[0], rest[2], user)
            if not namespaced and path.startswith(_path(group, version, plural) + "/"):
                return self._get_one(plural, None, path.rsplit("/", 1)[1], user)
        if path.startswith("/api/v1/namespaces/") and path.count("/") == 4:  # GET one namespace
            return self._get_one("namespaces", None, path.rsplit("/", 1)[1], user)
        return 404, status_body(404, "NotFound", "the server could not find the requested resource")

    def _get_one(self, plural: str, ns: str | None, name: str, user: str) -> tuple[int, dict]:
        if (user, plural) in self.forbidden:
            return 403, forbidden_body(user, plural, "")
        for kind, (group, version, p, _namespaced) in KINDS.items():
            if p != plural:
                continue
            for it in self.by_path[_path(group, version, plural)]:
                meta = it.get("metadata", {})
                if meta.get("name") == name and (ns is None or meta.get("namespace", "default") == ns):
                    return 200, {"kind": kind, "apiVersion": f"{group}/{version}" if group else version, **it}
        return 404, status_body(404, "NotFound", f'{plural} "{name}" not found')

    def _list(self, kind: str, gv: str, plural: str, query: dict[str, str], user: str) -> tuple[int, dict]:
        group = gv.rpartition("/")[0]
        if plural in self.not_served:
            return 404, status_body(404, "NotFound", "the server could not find the requested resource")
        if (user, plural) in self.forbidden:
            return 403, forbidden_body(user, plural, group)
        if self.throttle > 0:
            self.throttle -= 1
            return 429, status_body(429, "TooManyRequests", "Too many requests, please try again later.")
        items = self.by_path[_path(group, gv.rpartition("/")[2], plural)]
        selector = query.get("fieldSelector", "")
        if selector:
            if plural != "pods":
                return 400, status_body(400, "BadRequest", f'field label not supported: "{selector}"')
            try:
                items = [it for it in items if _matches(it, selector)]
            except ValueError as e:
                return 400, status_body(400, "BadRequest", str(e))
        start = 0
        token = query.get("continue", "")
        if token:
            if self.expire_continue > 0:
                self.expire_continue -= 1
                return 410, status_body(410, "Expired", "The provided continue parameter is too old to display a "
                                                        "consistent list result. You can start a new list without "
                                                        "the continue parameter.")
            try:
                state = json.loads(base64.urlsafe_b64decode(token.encode()))
                start = int(state["start"])
            except (ValueError, KeyError, TypeError):
                return 400, status_body(400, "BadRequest", "continue key is not valid")
        limit = int(query["limit"]) if query.get("limit", "").isdigit() and int(query["limit"]) > 0 else None
        if limit is not None and self.page_cap is not None:
            limit = min(limit, self.page_cap)
        end = len(items) if limit is None else min(len(items), start + limit)
        meta: dict = {"resourceVersion": str(self.rv)}
        if end < len(items):
            meta["continue"] = base64.urlsafe_b64encode(json.dumps({"rv": self.rv, "start": end}).encode()).decode()
            meta["remainingItemCount"] = len(items) - end
        return 200, {"kind": f"{kind}List", "apiVersion": gv, "metadata": meta, "items": items[start:end]}


def _prefix(group: str, version: str) -> str:
    return f"/apis/{group}/{version}" if group else f"/api/{version}"


def _path(group: str, version: str, plural: str) -> str:
    return f"{_prefix(group, version)}/{plural}"


def _discovery_path(group: str, version: str) -> str:
    return _prefix(group, version)


def _field(obj: dict, dotted: str) -> str:
    cur: object = obj
    for part in dotted.split("."):
        cur = cur.get(part) if isinstance(cur, dict) else None
    if dotted == "metadata.namespace" and cur is None:
        return "default"
    return "" if cur is None else str(cur)


def _matches(obj: dict, selector: str) -> bool:
    for term in selector.split(","):
        if not term:
            continue
        if "!=" in term:
            key, value, want = *term.split("!=", 1), False
        elif "==" in term:
            key, value, want = *term.split("==", 1), True
        elif "=" in term:
            key, value, want = *term.split("=", 1), True
        else:
            raise ValueError(f'invalid field selector: "{term}"')
        if key not in SELECTABLE_POD_FIELDS:
            raise ValueError(f'field label not supported: "{key}"')
        if (_field(obj, key) == value) != want:
            return False
    return True


def status_body(code: int, reason: str, message: str) -> dict:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": reason, "code": code}


def forbidden_body(user: str, plural: str, group: str) -> dict:
    return status_body(403, "Forbidden", f'{plural}{"." + group if group else ""} is forbidden: User "{user}" '
                                         f'cannot list resource "{plural}" in API group "{group}" at the '
                                         f"cluster scope")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    ssl_context: ssl.SSLContext | None = None

    def handle_error(self, request, client_address) -> None:  # a client that gave up on TLS: not news
        pass

    def get_request(self):  # the TLS handshake happens in the handler's thread, not the accept loop
        sock, addr = super().get_request()
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no 40 ms delayed-ACK stall per answer
        if self.ssl_context is not None:
            sock = self.ssl_context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, addr


class _Handler(BaseHTTPRequestHandler):
    api: FakeApiServer
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        self.peer_cn: str | None = None
        if isinstance(self.request, ssl.SSLSocket):
            self.request.settimeout(10)
            try:
                self.request.do_handshake()
            except (ssl.SSLError, OSError):
                self.request.close()
                raise
            cert = self.request.getpeercert()
            if cert:
                for rdn in cert.get("subject", ()):
                    for key, value in rdn:
                        if key == "commonName":
                            self.peer_cn = value
        super().setup()

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        headers = {k.lower(): v for k, v in self.headers.items()}
        status, body = self.api.handle(self.command, self.path, headers, self.peer_cn)
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        if status == 429:
            self.send_header("Retry-After", "0")
        if "gzip" in headers.get("accept-encoding", "") and len(data) > 128:
            data = gzip.compress(data)
            self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _serve


# ------------------------------------------------------------------------------------------ TLS material
@dataclass
class TlsFiles:
    ca_cert: Path
    ca_key: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path
    other_ca_cert: Path  # a CA that signed nothing here: the "wrong CA"


def make_tls(folder: Path, client_cn: str = "cert-user") -> TlsFiles:
    """A CA, a server certificate for 127.0.0.1/localhost, a client certificate and an unrelated CA."""
    folder.mkdir(parents=True, exist_ok=True)
    try:
        import cryptography  # noqa: F401
    except ImportError:  # pragma: no cover - depends on the machine
        return _make_tls_openssl(folder, client_cn)
    return _make_tls_cryptography(folder, client_cn)


def _make_tls_cryptography(folder: Path, client_cn: str) -> TlsFiles:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.datetime.now(datetime.UTC)

    def key():
        return ec.generate_private_key(ec.SECP256R1())

    def name(cn: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])

    def write_key(k, path: Path) -> None:
        path.write_bytes(k.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                         serialization.NoEncryption()))

    def ca(cn: str, cert_path: Path, key_path: Path):
        k = key()
        cert = (x509.CertificateBuilder().subject_name(name(cn)).issuer_name(name(cn)).public_key(k.public_key())
                .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(hours=1))
                .not_valid_after(now + datetime.timedelta(days=1))
                .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                             data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                             crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
                .add_extension(x509.SubjectKeyIdentifier.from_public_key(k.public_key()), critical=False)
                .sign(k, hashes.SHA256()))
        cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        write_key(k, key_path)
        return cert, k

    def leaf(cn: str, ca_cert, ca_key, server: bool, cert_path: Path, key_path: Path) -> None:
        k = key()
        b = (x509.CertificateBuilder().subject_name(name(cn)).issuer_name(ca_cert.subject).public_key(k.public_key())
             .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(hours=1))
             .not_valid_after(now + datetime.timedelta(days=1))
             .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
             .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
             .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH if server
                                                   else ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False))
        if server:
            b = b.add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                             x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                                critical=False)
        cert = b.sign(ca_key, hashes.SHA256())
        cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        write_key(k, key_path)

    files = _names(folder)
    ca_cert, ca_key = ca("pysched-test-ca", files.ca_cert, files.ca_key)
    leaf("127.0.0.1", ca_cert, ca_key, True, files.server_cert, files.server_key)
    leaf(client_cn, ca_cert, ca_key, False, files.client_cert, files.client_key)
    ca("some-other-ca", files.other_ca_cert, folder / "other-ca.key")
    return files


def _names(folder: Path) -> TlsFiles:
    return TlsFiles(folder / "ca.crt", folder / "ca.key", folder / "server.crt", folder / "server.key",
                    folder / "client.crt", folder / "client.key", folder / "other-ca.crt")


def _make_tls_openssl(folder: Path, client_cn: str) -> TlsFiles:  # pragma: no cover - fallback
    if shutil.which("openssl") is None:
        raise RuntimeError("neither the cryptography package nor the openssl command is available")
    files = _names(folder)

    def run(*args: str) -> None:
        subprocess.run(["openssl", *args], check=True, capture_output=True, cwd=folder)

    for ca_name, cert, key in (("pysched-test-ca", files.ca_cert, files.ca_key),
                               ("some-other-ca", files.other_ca_cert, folder / "other-ca.key")):
        run("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
            "-subj", f"/CN={ca_name}", "-keyout", str(key), "-out", str(cert),
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    for cn, cert, key, ext in (("127.0.0.1", files.server_cert, files.server_key,
                                "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n"),
                               (client_cn, files.client_cert, files.client_key, "extendedKeyUsage=clientAuth\n")):
        csr = folder / f"{cert.stem}.csr"
        extfile = folder / f"{cert.stem}.ext"
        extfile.write_text("basicConstraints=CA:FALSE\n" + ext)
        run("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj", f"/CN={cn}",
            "-keyout", str(key), "-out", str(csr))
        run("x509", "-req", "-in", str(csr), "-CA", str(files.ca_cert), "-CAkey", str(files.ca_key),
            "-CAcreateserial", "-days", "1", "-out", str(cert), "-extfile", str(extfile))
    return files


def b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode()
