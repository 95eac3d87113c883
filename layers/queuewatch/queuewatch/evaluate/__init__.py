"""The evaluate stage: plan.py judges (pure), page.py words the pages, delivery.py publishes them
through an outbox, stage.py runs one tick in that order."""

from queuewatch.evaluate.delivery import EvaluatorMemory
from queuewatch.evaluate.plan import COLLECTOR, DISCOVERY, Plan, health_rule, plan
from queuewatch.evaluate.result import EvaluationResult
from queuewatch.evaluate.stack import Stack
from queuewatch.evaluate.stage import evaluate

__all__ = [
    "COLLECTOR",
    "DISCOVERY",
    "EvaluationResult",
    "EvaluatorMemory",
    "Plan",
    "Stack",
    "evaluate",
    "health_rule",
    "plan",
]
