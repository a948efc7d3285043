"""Scoring: model loading, estimators, metrics (pure functions), run bookkeeping, executors."""
