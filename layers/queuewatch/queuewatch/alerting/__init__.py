"""What the rules make of the fleet, pure: silences, alert state, the triage, the alert message, and each
SLO's reading and summary (these read the config). No boto3, YAML or adapter."""
