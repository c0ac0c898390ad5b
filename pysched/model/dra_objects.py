"""The DRA objects of a snapshot (``Cluster.dra``) and the API version of their kinds: the part of DRA every
run holds, apart from the parsing and the objects' classes in ``pysched.model.dra``, which a run without DRA
objects never imports."""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING

from pysched.lazyclass import dataclass

if TYPE_CHECKING:
    from pysched.model.dra import DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice

API_VERSION = "resource.k8s.io/v1"


@dataclass
class DRAObjects:
    classes: dict[str, DeviceClass] = field(default_factory=dict)
    slices: list[ResourceSlice] = field(default_factory=list)
    claims: list[ResourceClaim] = field(default_factory=list)
    templates: dict[str, ResourceClaimTemplate] = field(default_factory=dict)  # ns/name

    def __bool__(self) -> bool:
        return bool(self.classes or self.slices or self.claims or self.templates)
