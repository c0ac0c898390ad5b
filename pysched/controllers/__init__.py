"""Workloads become pods as their controllers would make them, and what-if edits to the cluster.

``build_world(cluster, edits, options)`` returns a new ``Cluster`` (the input is never changed): the
edits applied in order, then every workload expanded in input order, the created pods admitted and
pending. See ../shared/conformance/workloads/README.md for the rules followed.
"""

from pysched.controllers.edits import EDIT_KINDS, Edit, parse_edit_flags, parse_scenario
from pysched.controllers.engine import Expansion, ExpansionOptions, expand_cluster

__all__ = ["EDIT_KINDS", "Edit", "Expansion", "ExpansionOptions", "expand_cluster", "parse_edit_flags",
           "parse_scenario"]
