"""Cassettes on disk: the store, recorded interactions, bodies, SSE, redaction, foreign formats."""
