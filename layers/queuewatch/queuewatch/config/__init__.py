"""The config file's schema (schema.py, sources.py, names.py): what the stages read.

Loading it from YAML, with line-accurate errors, is `queuewatch.config.load`; the checks
across entries are lint.py. The schema imports no YAML, so the pure planner can use it.
"""

from queuewatch.config.schema import CONFIG_VERSION, Config, DiscoverySpec, RunnerTypeSpec
from queuewatch.config.sources import MetricQuery, SignalSource

__all__ = ["CONFIG_VERSION", "Config", "DiscoverySpec", "MetricQuery", "RunnerTypeSpec", "SignalSource"]
