"""Golden baselines: stored decisions per target, case and variant, and a run's diff to them."""
