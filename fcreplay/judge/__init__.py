"""Judging decisions: expectations, the argument repair policy, JSON Schema, call assignment."""
