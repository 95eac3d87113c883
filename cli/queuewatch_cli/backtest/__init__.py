"""`queuewatch backtest`: recorded CloudWatch history replayed through the evaluator's own plan."""
