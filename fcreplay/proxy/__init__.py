"""`fcreplay proxy`: a loopback record/replay server in front of providers, for any client."""
