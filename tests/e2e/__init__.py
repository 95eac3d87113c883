"""End-to-end checks: both functions through `sam local invoke`, against a moto server container."""
