"""The DRA view of one simulation: claims with their status as this simulation changed it, the devices
they hold, and the resourceclaim controller's part (claims from templates, release on pod deletion).

Loaded objects are never mutated: claims are this state's own copies, replaced (not edited) on change.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from pysched.model.objects import ObjectMeta, Pod

if TYPE_CHECKING:
    from pysched.model.dra import Allocation, ResourceClaim, ResourceSlice
    from pysched.model.dra_objects import DRAObjects
    from pysched.model.objects import Node

DeviceID = tuple[str, str, str]  # driver, pool, device


class ClaimLookupError(Exception):
    """Why a pod's claim cannot be used yet (upstream's messages)."""


def pod_claim_statuses(pod: Pod) -> dict[str, str | None]:
    """``status.resourceClaimStatuses`` of the pod: pod claim name -> ResourceClaim name (None: none needed)."""
    status = pod.raw.get("status") if isinstance(pod.raw, dict) else None
    out: dict[str, str | None] = {}
    if isinstance(status, dict):
        for s in status.get("resourceClaimStatuses") or ():
            if isinstance(s, dict) and isinstance(s.get("name"), str):
                name = s.get("resourceClaimName")
                out.setdefault(s["name"], name if isinstance(name, str) and name else None)
    return out


class DRAState:
    def __init__(self, objects: DRAObjects, pods: list[Pod]) -> None:
        self.objects = objects
        self.classes = objects.classes
        self.slices: list[ResourceSlice] = objects.slices
        # Equal claim specs share one object, so that per-spec caches (the plugin's batched path) hit for
        # claims made from one template, or written alike.
        self._specs: dict = {}
        self.claims: dict[str, ResourceClaim] = {c.key: replace(c, spec=self._intern(c.spec)) for c in objects.claims}
        self.pod_claims: dict[str, dict[str, str | None]] = {}  # pod key -> statuses (with generated claims)
        self.notes: list[str] = []
        for pod in pods:
            if pod.resource_claims:
                self._controller(pod)
        self.allocated: dict[DeviceID, int] = {}
        self.pool_version: dict[tuple[str, str], int] = {}  # (driver, pool) -> changes of its devices in use
        for c in self.claims.values():
            self._count(c, 1)
        self._pools_by_node: dict[str, list] = {}

    # ------------------------------------------------------------------ the resourceclaim controller
    def _controller(self, pod: Pod) -> None:
        """Claims from templates that do not exist yet are created as the controller would (owned by the
        pod, annotated with the pod's claim name); a missing template creates nothing."""
        statuses = dict(pod_claim_statuses(pod))
        for pc in pod.resource_claims:
            name, template = pc.get("name"), pc.get("resourceClaimTemplateName")
            if not isinstance(name, str) or not isinstance(template, str) or not template or name in statuses:
                continue
            tmpl = self.objects.templates.get(f"{pod.namespace}/{template}")
            if tmpl is None:
                self.notes.append(f"template {pod.namespace}/{template} of pod {pod.key} (claim {name}) does not "
                                  "exist: no claim created")
                continue
            # (pysched.model.dra is imported where a claim is made or changed: runs without DRA objects do neither)
            from pysched.model.dra import ANN_POD_CLAIM_NAME, ResourceClaim, generated_claim_name

            claim_name = generated_claim_name(pod.name, name, pod.uid)
            meta = ObjectMeta(claim_name, pod.namespace, f"{pod.uid}-{name}", dict(tmpl.meta.labels),
                              {**tmpl.meta.annotations, ANN_POD_CLAIM_NAME: name}, pod.meta.creation,
                              [{"apiVersion": "v1", "kind": "Pod", "name": pod.name, "uid": pod.uid,
                                "controller": True, "blockOwnerDeletion": True}], None)
            claim = ResourceClaim(meta, self._intern(tmpl.spec), generated=True)
            self.claims.setdefault(claim.key, claim)
            statuses[name] = claim_name
        self.pod_claims[pod.key] = statuses

    def _intern(self, spec):
        try:
            return self._specs.setdefault(spec, spec)
        except TypeError:  # pragma: no cover - specs are frozen and hashable
            return spec

    def claim_name(self, pod: Pod, pc: dict) -> tuple[str | None, bool]:
        """Upstream ``resourceclaim.Name``: (claim name or None when none is needed, must check owner)."""
        if isinstance(pc.get("resourceClaimName"), str) and pc["resourceClaimName"]:
            return pc["resourceClaimName"], False
        if isinstance(pc.get("resourceClaimTemplateName"), str) and pc["resourceClaimTemplateName"]:
            statuses = self.pod_claims.get(pod.key)
            if statuses is None:  # a pod made after the state (a workload's, a capacity copy): the controller
                self._controller(pod)  # creates its claims now
                statuses = self.pod_claims[pod.key]
            if pc.get("name") in statuses:
                return statuses[pc["name"]], True
            raise ClaimLookupError(f'pod "{pod.namespace}/{pod.name}": ResourceClaim not created yet')
        raise ClaimLookupError(f'pod "{pod.namespace}/{pod.name}", spec.resourceClaim {pc.get("name")!r}: '
                               "none of the supported fields are set")

    def pod_claim_objects(self, pod: Pod) -> list[ResourceClaim]:
        """Upstream ``foreachPodResourceClaim``: the pod's claims, or ClaimLookupError."""
        out = []
        for pc in pod.resource_claims:
            name, must_check_owner = self.claim_name(pod, pc)
            if name is None:
                continue
            claim = self.claims.get(f"{pod.namespace}/{name}")
            if claim is None:
                raise ClaimLookupError(f'resourceclaim.resource.k8s.io "{name}" not found')
            if claim.meta.deletion_timestamp:
                raise ClaimLookupError(f'resourceclaim "{name}" is being deleted')
            if must_check_owner:
                ref = claim.meta.controller_ref()
                if ref is None or ref.get("uid") != pod.uid or ref.get("kind") != "Pod":
                    raise ClaimLookupError(f"ResourceClaim {claim.key} was not created for pod {pod.key} "
                                           "(pod is not owner)")
            out.append(claim)
        return out

    def claim_keys_of(self, pod: Pod) -> list[str]:
        keys = []
        for pc in pod.resource_claims:
            try:
                name, _ = self.claim_name(pod, pc)
            except ClaimLookupError:
                continue
            if name:
                keys.append(f"{pod.namespace}/{name}")
        return keys

    # ------------------------------------------------------------------ devices in use
    def _count(self, claim: ResourceClaim, sign: int) -> None:
        if claim.allocation is None:
            return
        for r in claim.allocation.results:
            if r.admin_access:
                continue  # admin access does not take the device
            d = (r.driver, r.pool, r.device)
            self.pool_version[(r.driver, r.pool)] = self.pool_version.get((r.driver, r.pool), 0) + 1
            n = self.allocated.get(d, 0) + sign
            if n > 0:
                self.allocated[d] = n
            else:
                self.allocated.pop(d, None)

    def allocated_devices(self, from_scratch: bool = False) -> set[DeviceID] | dict[DeviceID, int]:
        """Devices some claim's allocation holds (upstream ListAllAllocatedDevices)."""
        if not from_scratch:
            return self.allocated
        out: set[DeviceID] = set()
        for c in self.claims.values():
            if c.allocation is not None:
                out.update((r.driver, r.pool, r.device) for r in c.allocation.results if not r.admin_access)
        return out

    def pools_for(self, node: Node, gather) -> list:
        """The pools a node sees, gathered once per node (slices and node labels do not change)."""
        hit = self._pools_by_node.get(node.name)
        if hit is None:
            hit = gather(self.slices, node)
            self._pools_by_node[node.name] = hit
        return hit

    # ------------------------------------------------------------------ changes
    def _store(self, claim: ResourceClaim) -> None:
        old = self.claims.get(claim.key)
        if old is not None:
            self._count(old, -1)
        self.claims[claim.key] = claim
        self._count(claim, 1)

    def allocate_and_reserve(self, claim: ResourceClaim, allocation: Allocation | None, pod: Pod) -> ResourceClaim:
        """PreBind's write: the allocation (when new) and the pod in reservedFor."""
        from pysched.model.dra import Consumer

        cur = self.claims.get(claim.key, claim)
        new = replace(cur, allocation=allocation if allocation is not None else cur.allocation,
                      reserved_for=(*cur.reserved_for, Consumer("pods", pod.name, pod.uid)))
        self._store(new)
        return new

    def unreserve(self, key: str, pod_uid: str) -> None:
        cur = self.claims.get(key)
        if cur is not None:
            self._store(replace(cur, reserved_for=tuple(c for c in cur.reserved_for if c.uid != pod_uid)))

    def deallocate(self, key: str) -> None:
        cur = self.claims.get(key)
        if cur is not None:
            self._store(replace(cur, allocation=None, reserved_for=()))

    def pod_deleted(self, pod: Pod) -> None:
        """The resourceclaim controller on pod deletion: the pod leaves reservedFor; a claim reserved for
        nobody is deallocated; claims the pod owned are deleted."""
        for key in self.claim_keys_of(pod):
            cur = self.claims.get(key)
            if cur is None:
                continue
            ref = cur.meta.controller_ref()
            if ref is not None and ref.get("kind") == "Pod" and ref.get("uid") == pod.uid:
                self._count(cur, -1)
                del self.claims[key]
                continue
            left = tuple(c for c in cur.reserved_for if c.uid != pod.uid)
            if left == cur.reserved_for:
                continue
            if not left:
                self._store(replace(cur, allocation=None, reserved_for=()))
            else:
                self._store(replace(cur, reserved_for=left))
