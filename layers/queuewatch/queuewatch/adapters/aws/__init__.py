"""Shared AWS helpers: the clients per region, failures as short reasons, DynamoDB's item size."""
