"""queuewatch: pages the CI on-call when jobs queue on a self-hosted GitHub Actions runner fleet."""

__version__ = "0.1.0"
