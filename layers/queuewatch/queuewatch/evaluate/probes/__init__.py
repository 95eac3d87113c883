"""queuewatch's own health probes, one per file: each steps the monitor's instances (the reserved health rule)
for one thing queuewatch could fail to see, and names what it could not see (pure)."""
