"""What the handlers import around the stages: settings from the environment, the schedule's event, how a
Snapshot travels (wire), and the names of queuewatch's own metrics."""
