"""The SLO table: the counters per SLO and bucket and the marks of counted jobs (counters.py), and the
collector's read of them (readings.py)."""
