"""The fleet as queuewatch sees it, pure: signals, the snapshot, jobs and their sources, the autoscaler's names,
paths, matcher and log lines, GitHub's status, the rules and the SLO conventions. No boto3, YAML or adapter."""
