"""The names under which queuewatch's own metrics are published, for everything that reads them back:
status, the pager body's Trigger, the dashboard. CloudWatch answers a query only for a metric's whole
dimension set, so the set is written once, here."""

from __future__ import annotations

SERVICE = "queuewatch"  # POWERTOOLS_SERVICE_NAME in template.yaml; Powertools adds it as a dimension


def runner_type_dimensions(stack: str, runner_type: str) -> tuple[tuple[str, str], ...]:
    """The exact dimensions of QueueSize and QueueTime per runner type, as telemetry.record_tick emits them."""
    return (("RunnerType", runner_type), ("Stack", stack), ("service", SERVICE))
