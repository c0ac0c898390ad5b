"""Deterministic names and UIDs for objects the simulation creates (same input => same names).

Shapes are the API server's and the controllers' (``<prefix><5 chars>``, ``<deploy>-<hash>``); the
randomness upstream draws is replaced by a stable hash (see ../shared/conformance/workloads/README.md).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable

ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # the API server's: no vowels, no look-alike digits
MAX_GENERATED_PREFIX = 58  # 63 minus the five random characters


def suffix5(seed: str) -> str:
    import hashlib  # here: OpenSSL's start costs every run, and most never generate a name

    digest = hashlib.sha256(seed.encode()).digest()
    return "".join(ALPHABET[b % len(ALPHABET)] for b in digest[:5])


def safe_encode(text: str) -> str:
    """Upstream ``rand.SafeEncodeString``: every byte mapped onto the alphabet."""
    return "".join(ALPHABET[b % len(ALPHABET)] for b in text.encode())


def fnv32a(data: bytes) -> int:
    h = 0x811C9DC5
    for b in data:
        h ^= b
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h


def canonical_json(obj: object) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def template_hash(template: object, collision_count: int = 0) -> str:
    """``pod-template-hash`` / ``controller-revision-hash`` of a pod template."""
    data = canonical_json(template)
    if collision_count > 0:
        data += str(collision_count).encode()
    return safe_encode(str(fnv32a(data)))


def make_uid(kind: str, namespace: str, name: str, k: int = 0) -> str:
    import hashlib

    digest = hashlib.sha256(f"pysched-uid/{kind}/{namespace}/{name}/{k}".encode()).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))


class NameGenerator:
    """``generateName`` as the API server resolves it, deterministically: one counter per namespace and
    prefix for the whole run, advanced by every candidate tried; taken names are skipped."""

    def __init__(self, taken: Callable[[str, str], bool]) -> None:
        self.taken = taken
        self.counters: dict[tuple[str, str], int] = {}
        self.uid_counts: dict[tuple[str, str, str], int] = {}

    def generate(self, namespace: str, generate_name: str) -> str:
        prefix = generate_name[:MAX_GENERATED_PREFIX]
        while True:
            n = self.counters.get((namespace, prefix), 0)
            self.counters[(namespace, prefix)] = n + 1
            name = prefix + suffix5(f"{namespace}/{prefix}/{n}")
            if not self.taken(namespace, name):
                return name

    def uid(self, kind: str, namespace: str, name: str) -> str:
        """The uid of the k-th object of that kind, namespace and name the simulation creates."""
        key = (kind, namespace, name)
        k = self.uid_counts.get(key, 0)
        self.uid_counts[key] = k + 1
        return make_uid(kind, namespace, name, k)
