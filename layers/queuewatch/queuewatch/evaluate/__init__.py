"""The evaluate stage: plan.py judges (pure), page.py words the pages, delivery.py publishes them
through an outbox, stage.py runs one tick in that order.

The package exports the pure part, which a backtest drives too; the stage, which reads and writes
AWS, is `queuewatch.evaluate.stage.evaluate`.
"""

from queuewatch.evaluate.context import health_rule
from queuewatch.evaluate.plan import plan
from queuewatch.evaluate.probes.discovery import DISCOVERY
from queuewatch.evaluate.result import EvaluationResult
from queuewatch.evaluate.stack import Stack
from queuewatch.evaluate.steps import Plan
from queuewatch.model.rules import COLLECTOR

__all__ = ["COLLECTOR", "DISCOVERY", "EvaluationResult", "Plan", "Stack", "health_rule", "plan"]
