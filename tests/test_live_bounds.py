"""Every network wait is bounded and stated truthfully (issue 17): a silent, stalling or dripping server,
and an exec credential plugin that hangs, give exit 2 within the documented bound, naming the server and
what it waited for."""

from __future__ import annotations

import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

from pysched.errors import SourceError
from pysched.snapshot import live


def _kubeconfig(path: Path, server: str, user: dict | None = None) -> str:
    doc = {"apiVersion": "v1", "kind": "Config", "current-context": "dev",
           "clusters": [{"name": "c", "cluster": {"server": server, "insecure-skip-tls-verify": True}}],
           "contexts": [{"name": "dev", "context": {"cluster": "c", "user": "u"}}],
           "users": [{"name": "u", "user": user or {"token": "t"}}]}
    path.write_text(yaml.safe_dump(doc))
    return str(path)


@contextmanager
def _server(handle: Callable[[socket.socket], None]) -> Iterator[int]:
    """A TCP server running ``handle`` on each connection in a thread; yields its port."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    sock.settimeout(0.1)
    stop = threading.Event()
    conns: list[socket.socket] = []

    def loop() -> None:
        while not stop.is_set():
            try:
                conn = sock.accept()[0]
            except OSError:
                continue
            conns.append(conn)
            threading.Thread(target=handle, args=(conn,), daemon=True).start()

    t = threading.Thread(target=loop, daemon=True)
    t.start()
    try:
        yield sock.getsockname()[1]
    finally:
        stop.set()
        t.join()
        for c in conns:
            c.close()
        sock.close()


def _silent(conn: socket.socket) -> None:
    time.sleep(30)


def _drip(conn: socket.socket) -> None:
    conn.settimeout(5)
    try:
        conn.recv(65536)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{")
        for _ in range(200):
            time.sleep(0.1)
            conn.sendall(b" ")
    except OSError:
        pass


@pytest.fixture
def short(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(live, "CONNECT_TIMEOUT", 1)
    monkeypatch.setattr(live, "READ_TIMEOUT", 2)
    monkeypatch.setattr(live, "REQUEST_TIMEOUT", (1, 2))
    monkeypatch.setattr(live, "REQUEST_DEADLINE", 1.5)
    monkeypatch.setattr(live, "EXEC_TIMEOUT", 1)


@pytest.mark.parametrize(("scheme", "message", "bound"), [
    ("http", "did not answer GET /version: 2 s without a byte; given up (no retries)", 2),
    ("https", "accepted the connection but the TLS handshake did not complete within 1 s", 1)])
def test_silent_server(tmp_path: Path, short: None, scheme: str, message: str, bound: float) -> None:
    with _server(_silent) as port:
        url = f"{scheme}://127.0.0.1:{port}"
        start = time.monotonic()
        with pytest.raises(SourceError) as err:
            live.load_live(_kubeconfig(tmp_path / "kc", url), None)
        took = time.monotonic() - start
    assert f"the API server at {url} {message}" in str(err.value) and err.value.exit_code == 2
    assert bound - 0.2 < took < bound + 1.5, took  # the wait stated is the wait made: no hidden retry


def test_dripping_server_is_cut_at_the_request_deadline(tmp_path: Path, short: None) -> None:
    with _server(_drip) as port:
        url = f"http://127.0.0.1:{port}"
        start = time.monotonic()
        with pytest.raises(SourceError) as err:
            live.load_live(_kubeconfig(tmp_path / "kc", url), None)
        took = time.monotonic() - start
    assert f"the API server at {url} gave no complete answer within 1.5 s" in str(err.value)
    assert "GET /version" in str(err.value)
    assert took < 1.5 + 2 + 1, took  # deadline, plus at most one read timeout


def test_hanging_exec_plugin_is_stopped(tmp_path: Path, short: None) -> None:
    plugin = tmp_path / "plugin.py"
    plugin.write_text("import time\ntime.sleep(60)\n")
    user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": sys.executable,
                     "args": [str(plugin)], "interactiveMode": "Never"}}
    start = time.monotonic()
    with pytest.raises(SourceError) as err:
        live.load_live(_kubeconfig(tmp_path / "kc", "https://127.0.0.1:9", user), None)
    took = time.monotonic() - start
    assert "the exec credential plugin" in str(err.value) and "did not finish within 1 s and was stopped" in str(err.value)
    assert took < 5, took


def test_the_documented_bound_adds_up() -> None:
    assert live.REQUEST_BOUND == 4 * (live.CONNECT_TIMEOUT + live.REQUEST_DEADLINE + live.READ_TIMEOUT) + 3 * 10
    assert live._retries().total == 0
