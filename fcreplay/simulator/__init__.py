"""The bundled loopback provider simulator: a test and demo tool, never a claim about models."""
