"""One module per CLI command; each defines `command`, imported only when it runs."""
