"""The forecast: capacity's pool model, and the next minutes projected with it for each runner type."""
