"""The state table: alert state, pages, silences and the cursor (alerts.py), the sent and transition logs,
and the config's known names; the item keys are keys.py's."""
