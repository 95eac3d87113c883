"""The track stage's pure parts: GitHub's workflow_job events, routing by labels, a job's state.
The stage itself (track.stage.track) writes the jobs table through adapters/jobs_table/jobs.py; the record and
the table's layout are queuewatch.model.jobs."""

from queuewatch.model.jobs import JobRecord
from queuewatch.track.events import WorkflowJobEvent
from queuewatch.track.jobs import record_of
from queuewatch.track.routing import Router, label_set

__all__ = ["JobRecord", "Router", "WorkflowJobEvent", "label_set", "record_of"]
