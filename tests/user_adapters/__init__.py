"""Adapters defined outside the package, as a user would write them, for the seam tests."""
