"""queuewatch's benchmark: real collect and evaluate ticks against a moto server. `make bench` runs it."""
