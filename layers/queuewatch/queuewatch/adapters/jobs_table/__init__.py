"""The jobs table: one item per tracked job (jobs.py) and the job sources' heartbeats (heartbeats.py)."""
