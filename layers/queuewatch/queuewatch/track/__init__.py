"""The track stage: one item per GitHub Actions job, from the workflow_job events (schema.py: the contract)."""
