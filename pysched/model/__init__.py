"""Lean Kubernetes object model parsed from plain dicts."""
