"""The pytest plugin's parts: test naming, the `fcreplay` fixture object, and the session."""
