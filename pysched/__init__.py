"""pysched: a what-if analyzer for the Kubernetes scheduler (kube-scheduler v1.34 semantics)."""

__version__ = "0.1.0"
K8S_VERSION = "v1.34.1"
