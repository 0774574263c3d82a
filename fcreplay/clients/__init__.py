"""HTTP clients for the user's code whose transport replays or records client traffic."""
