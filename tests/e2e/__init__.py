"""End-to-end checks: the functions through `sam local invoke`, against a moto server container."""
