"""Renderers: simulation traces to rich tables, plain/GitHub tables, JSON and YAML. They never recompute."""
