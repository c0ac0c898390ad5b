"""An extender's HTTP transport: TLS settings and connections.

Apart from ``extender`` so that ``http.client`` and ``ssl`` (with ``email`` and ``socket`` behind them,
about a tenth of the CLI's start) are imported only when a configuration names an HTTPS extender or an
extender is called."""

from __future__ import annotations

import http.client
import os
import ssl
import tempfile

from pysched.errors import ConfigError
from pysched.framework import plugin_args as pa
from pysched.framework.extender import ExtenderConfig, ExtenderTLS

HTTPException = http.client.HTTPException


def _load_pem_pair(ctx: ssl.SSLContext, cert: bytes, key: bytes) -> None:
    """``load_cert_chain`` reads files only: write the in-line PEM data to private temporary files."""
    paths = []
    try:
        for data in (cert, key):
            fd, name = tempfile.mkstemp(suffix=".pem")
            paths.append(name)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
        ctx.load_cert_chain(paths[0], paths[1])
    finally:
        for name in paths:
            os.unlink(name)


def make_ssl_context(cfg: ExtenderConfig, path: str = "") -> ssl.SSLContext:
    """The TLS settings of upstream's ``makeTransport``: ``enableHTTPS`` without a CA skips verification."""
    tls = cfg.tls or ExtenderTLS()
    tpath = pa.child(path, "tlsConfig")
    has_ca = bool(tls.ca_file or tls.ca_data)
    insecure = tls.insecure or (cfg.enable_https and not has_ca)
    if tls.insecure and has_ca:
        raise ConfigError("specifying a root certificates file with the insecure flag is not allowed",
                          field=tpath or None)
    try:
        ctx = ssl.create_default_context(cafile=tls.ca_file or None,
                                         cadata=tls.ca_data.decode() if tls.ca_data else None)
        if insecure:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        if tls.cert_file or tls.key_file:
            ctx.load_cert_chain(tls.cert_file, tls.key_file or None)
        elif tls.cert_data or tls.key_data:
            _load_pem_pair(ctx, tls.cert_data, tls.key_data)
    except (OSError, ssl.SSLError, ValueError, UnicodeDecodeError) as e:
        raise ConfigError(f"cannot set up TLS for extender {cfg.url_prefix}: {e}", field=tpath or None) from None
    return ctx


class _HTTPSConnection(http.client.HTTPSConnection):
    """An HTTPS connection that may present and verify another server name (``tlsConfig.serverName``)."""

    def __init__(self, host: str, port: int | None, timeout: float, context: ssl.SSLContext,
                 server_name: str) -> None:
        super().__init__(host, port, timeout=timeout, context=context)
        self._ssl_context = context
        self._server_name = server_name

    def connect(self) -> None:
        http.client.HTTPConnection.connect(self)
        self.sock = self._ssl_context.wrap_socket(self.sock, server_hostname=self._server_name or self.host)


def connection(host: str, port: int | None, timeout: float, context: ssl.SSLContext | None,
               server_name: str) -> http.client.HTTPConnection:
    """A connection to an extender: HTTPS with ``context`` when there is one, else plain HTTP."""
    if context is not None:
        return _HTTPSConnection(host, port, timeout, context, server_name)
    return http.client.HTTPConnection(host, port, timeout=timeout)
