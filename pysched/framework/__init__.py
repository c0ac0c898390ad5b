"""The scheduling framework: statuses, cycle state, extension points, registry, configuration."""
