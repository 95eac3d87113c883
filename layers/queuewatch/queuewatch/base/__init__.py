"""The ground floor: helpers that import nothing of queuewatch (errors, frozen models, durations, globs,
wording, SNS subjects)."""
