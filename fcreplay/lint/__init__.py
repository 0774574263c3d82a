"""Lint: provider compatibility of a suite's contract and targets."""
