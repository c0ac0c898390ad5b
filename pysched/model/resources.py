"""Resource lists and the ``Resource`` vector NodeInfo keeps (upstream ``framework.Resource``).

A resource list maps a resource name to an amount in milli-units (see ``quantity``).
"""

from __future__ import annotations

from collections.abc import Mapping

from pysched.apimachinery import qualified_name_errors
from pysched.model.quantity import milli_to_value

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL = "ephemeral-storage"
PODS = "pods"
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024
NON_ZERO_DEFAULTS = {CPU: DEFAULT_MILLI_CPU_REQUEST, MEMORY: DEFAULT_MEMORY_REQUEST * 1000}

_scalar_cache: dict[str, bool] = {}
_extended_cache: dict[str, bool] = {}


def is_extended(name: str) -> bool:
    hit = _extended_cache.get(name)
    if hit is None:
        hit = ("/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")
               and not qualified_name_errors("requests." + name))
        _extended_cache[name] = hit
    return hit


def is_scalar(name: str) -> bool:
    """Extended resources, hugepages, ``*kubernetes.io/*`` and attachable volumes."""
    hit = _scalar_cache.get(name)
    if hit is None:
        hit = (is_extended(name) or name.startswith("hugepages-") or "kubernetes.io/" in name
               or name.startswith("attachable-volumes-"))
        _scalar_cache[name] = hit
    return hit


def is_pod_level_supported(name: str) -> bool:
    return name in (CPU, MEMORY) or name.startswith("hugepages-")


class Resource:
    """Upstream's ``framework.Resource``: cpu in millicores, everything else in whole units."""

    __slots__ = ("allowed_pod_number", "ephemeral_storage", "memory", "milli_cpu", "scalar")

    def __init__(self, milli_cpu: int = 0, memory: int = 0, ephemeral_storage: int = 0,
                 allowed_pod_number: int = 0, scalar: dict[str, int] | None = None) -> None:
        self.milli_cpu = milli_cpu
        self.memory = memory
        self.ephemeral_storage = ephemeral_storage
        self.allowed_pod_number = allowed_pod_number
        self.scalar = scalar if scalar is not None else {}

    @classmethod
    def from_list(cls, rl: Mapping[str, int]) -> Resource:
        """``Resource.Add`` of a resource list in milli-units; unknown names are ignored."""
        r = cls()
        for name, milli in rl.items():
            if name == CPU:
                r.milli_cpu += milli
            elif name == MEMORY:
                r.memory += -((-milli) // 1000)  # milli_to_value, inline: every pod and node has one
            elif name == EPHEMERAL:
                r.ephemeral_storage += -((-milli) // 1000)
            elif name == PODS:
                r.allowed_pod_number += -((-milli) // 1000)  # (every node's allocatable has it)
            elif is_scalar(name):
                r.scalar[name] = r.scalar.get(name, 0) + milli_to_value(milli)
        return r

    def clone(self) -> Resource:
        return Resource(self.milli_cpu, self.memory, self.ephemeral_storage, self.allowed_pod_number,
                        dict(self.scalar))

    def add(self, other: Resource) -> None:
        self.milli_cpu += other.milli_cpu
        self.memory += other.memory
        self.ephemeral_storage += other.ephemeral_storage
        self.allowed_pod_number += other.allowed_pod_number
        if other.scalar:
            s = self.scalar
            for k, v in other.scalar.items():
                s[k] = s.get(k, 0) + v

    def sub(self, other: Resource) -> None:
        self.milli_cpu -= other.milli_cpu
        self.memory -= other.memory
        self.ephemeral_storage -= other.ephemeral_storage
        self.allowed_pod_number -= other.allowed_pod_number
        if other.scalar:
            s = self.scalar
            for k, v in other.scalar.items():
                s[k] = s.get(k, 0) - v

    def get(self, name: str) -> int:
        if name == CPU:
            return self.milli_cpu
        if name == MEMORY:
            return self.memory
        if name == EPHEMERAL:
            return self.ephemeral_storage
        if name == PODS:
            return self.allowed_pod_number
        return self.scalar.get(name, 0)

    def is_zero(self) -> bool:
        return (self.milli_cpu == 0 and self.memory == 0 and self.ephemeral_storage == 0
                and not self.scalar)

    def as_tuple(self) -> tuple:
        return (self.milli_cpu, self.memory, self.ephemeral_storage, self.allowed_pod_number,
                tuple(sorted((k, v) for k, v in self.scalar.items() if v)))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Resource) and self.as_tuple() == other.as_tuple()

    def __repr__(self) -> str:
        return (f"Resource(cpu={self.milli_cpu}m, memory={self.memory}, eph={self.ephemeral_storage}, "
                f"pods={self.allowed_pod_number}, scalar={self.scalar})")


def add_lists(into: dict[str, int], rl: Mapping[str, int]) -> None:
    for k, v in rl.items():
        into[k] = into.get(k, 0) + v


def max_lists(into: dict[str, int], rl: Mapping[str, int]) -> None:
    for k, v in rl.items():
        cur = into.get(k)
        if cur is None or v > cur:
            into[k] = v
