"""An agent loop on the official SDKs: the example application fcreplay's plugin tests."""
