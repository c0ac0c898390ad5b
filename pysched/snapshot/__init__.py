"""Loading snapshots (files or a live cluster) and the per-node running totals the scheduler reads."""
