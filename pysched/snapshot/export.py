"""Write objects read from a cluster as one ``kind: List`` that both ``kubectl apply -f`` and pysched read.

YAML gets a header comment (cluster, context, time, counts); both formats carry the same facts under
``metadata.annotations`` of the List. ``redact`` replaces env values, annotation values and
imagePullSecrets with placeholders (the scheduler reads none of them).
"""

from __future__ import annotations

import copy
import gzip
import json
import os
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import field
from datetime import UTC, datetime
from typing import Any

import yaml

from pysched.errors import InputError
from pysched.lazyclass import dataclass

_Dumper: Any  # the C dumper or the pure-Python one: the stubs type them apart
try:
    _Dumper = yaml.CSafeDumper
except AttributeError:  # pragma: no cover - libyaml missing
    _Dumper = yaml.SafeDumper

# annotations the volume plugins read: redacting them would change the decisions
KEEP_ANNOTATIONS = frozenset({"volume.kubernetes.io/selected-node", "volume.beta.kubernetes.io/storage-class",
                              "storage.alpha.kubernetes.io/migrated-plugins"})
PLACEHOLDER = "REDACTED"
ANNOTATION_PREFIX = "pysched/"
FORMATS = ("yaml", "json")


@dataclass
class SnapshotInfo:
    """Where and when the objects were read."""

    cluster: str
    context: str
    server: str
    taken_at: datetime
    counts: dict[str, int]  # kind -> objects, in listing order
    server_version: str = ""
    generator: str = ""
    redacted: bool = False
    notes: list[str] = field(default_factory=list)

    def counts_text(self) -> str:
        """The kinds read, zeros left out: ``7 Node, 17 Pod``."""
        return ", ".join(f"{n} {kind}" for kind, n in self.counts.items() if n)

    def annotations(self) -> dict[str, str]:
        out = {
            f"{ANNOTATION_PREFIX}cluster": self.cluster,
            f"{ANNOTATION_PREFIX}context": self.context,
            f"{ANNOTATION_PREFIX}server": self.server,
            f"{ANNOTATION_PREFIX}time": _rfc3339(self.taken_at),
            f"{ANNOTATION_PREFIX}counts": ",".join(f"{kind}={n}" for kind, n in self.counts.items()),
            f"{ANNOTATION_PREFIX}redacted": "true" if self.redacted else "false",
        }
        if self.server_version:
            out[f"{ANNOTATION_PREFIX}server-version"] = self.server_version
        if self.generator:
            out[f"{ANNOTATION_PREFIX}generator"] = self.generator
        return out


def _rfc3339(t: datetime) -> str:
    if t.tzinfo is not None:
        t = t.astimezone(UTC)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


# ------------------------------------------------------------------------------------------ redaction
def redact(obj: dict) -> dict:
    """A copy of ``obj`` with env values, annotation values and imagePullSecrets replaced, wherever they
    appear (pods, pod templates, claim templates)."""
    out = copy.deepcopy(obj)
    _redact(out)
    return out


def _redact(node: object) -> None:
    if isinstance(node, list):
        for item in node:
            _redact(item)
        return
    if not isinstance(node, dict):
        return
    meta = node.get("metadata")
    if isinstance(meta, dict) and isinstance(meta.get("annotations"), dict):
        meta["annotations"] = {k: (v if k in KEEP_ANNOTATIONS else PLACEHOLDER)
                               for k, v in meta["annotations"].items()}
    env = node.get("env")
    if isinstance(env, list):
        for var in env:
            if isinstance(var, dict) and "value" in var:
                var["value"] = PLACEHOLDER
    secrets = node.get("imagePullSecrets")
    if isinstance(secrets, list):
        node["imagePullSecrets"] = [{"name": f"redacted-{i + 1}"} for i in range(len(secrets))]
    for key, value in node.items():
        if key not in ("env", "imagePullSecrets") and isinstance(value, (dict, list)):
            _redact(value)


# ------------------------------------------------------------------------------------------ writing
def _api_ready(obj: dict) -> dict:
    """As ``kubectl get`` prints it, minus what the API server refuses on create (resourceVersion)."""
    meta = obj.get("metadata")
    if isinstance(meta, dict) and ("resourceVersion" in meta or "managedFields" in meta):
        obj = {**obj, "metadata": {k: v for k, v in meta.items() if k not in ("resourceVersion", "managedFields")}}
    return obj


def snapshot_list(objects: Iterable[dict], info: SnapshotInfo) -> dict:
    items = [redact(o) if info.redacted else o for o in objects]
    return {"apiVersion": "v1", "kind": "List",
            "metadata": {"annotations": info.annotations()},
            "items": [_api_ready(o) for o in items]}


def header(info: SnapshotInfo, path: str | None = None) -> str:
    version = f", Kubernetes {info.server_version}" if info.server_version else ""
    lines = [
        f"Snapshot of a Kubernetes cluster, read by {info.generator or 'pysched'} (GET requests only).",
        f"cluster:  {info.cluster} (server {info.server}{version})",
        f"context:  {info.context}",
        f"time:     {_rfc3339(info.taken_at)}",
        f"objects:  {info.counts_text() or 'none'}",
    ]
    if info.redacted:
        lines.append(f"redacted: env values, annotations and imagePullSecrets replaced by {PLACEHOLDER!r} "
                     f"placeholders")
    lines.extend(info.notes)
    lines.append(f"replay:   pysched simulate {path if path and path != '-' else 'THIS_FILE'}")
    return "".join(f"# {line}\n" for line in lines)


def render(objects: Iterable[dict], info: SnapshotInfo, fmt: str, path: str | None = None) -> str:
    doc = snapshot_list(objects, info)
    if fmt == "json":
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    if fmt == "yaml":
        body = yaml.dump(doc, Dumper=_Dumper, sort_keys=False, default_flow_style=False, allow_unicode=True,
                         width=1 << 16)
        return header(info, path) + body
    raise InputError(f"unknown snapshot format {fmt!r}: expected yaml or json", field="--format")


def format_for(path: str, fmt: str | None) -> str:
    """The explicit format, else from the file name (``.json``, ``.json.gz``), else YAML."""
    if fmt:
        return fmt
    name = path[:-3] if path.endswith(".gz") else path
    return "json" if name.endswith(".json") else "yaml"


def write_snapshot(path: str, objects: Iterable[dict], info: SnapshotInfo, fmt: str | None = None) -> str:
    """Write the snapshot to ``path`` (``-``: stdout; ``.gz``: gzip-compressed), atomically, mode 0600
    unless redacted. Returns the format written."""
    fmt = format_for(path, fmt)
    text = render(objects, info, fmt, path)
    if path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return fmt
    data = text.encode("utf-8")
    if path.endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    folder = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".pysched-snapshot-", dir=folder)
    except OSError as e:
        raise InputError(f"cannot write: {e.strerror or e}", file=path) from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        # an unredacted snapshot may hold env values: owner-only, like a kubeconfig
        os.chmod(tmp, (0o644 & ~_umask()) if info.redacted else 0o600)
        os.replace(tmp, path)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise InputError(f"cannot write: {e.strerror or e}", file=path) from None
    return fmt


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
