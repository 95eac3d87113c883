"""The config file: its schema (schema.py, sources.py, names.py), loading with line-accurate errors
(load.py), and the checks across entries (lint.py)."""

from queuewatch.config.load import ConfigError, ConfigProblem, load_config, parse_config
from queuewatch.config.schema import CONFIG_VERSION, Config, DiscoverySpec, RunnerTypeSpec
from queuewatch.config.sources import MetricQuery, SignalSource

__all__ = [
    "CONFIG_VERSION",
    "Config",
    "ConfigError",
    "ConfigProblem",
    "DiscoverySpec",
    "MetricQuery",
    "RunnerTypeSpec",
    "SignalSource",
    "load_config",
    "parse_config",
]
