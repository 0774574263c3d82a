"""Client traffic: exchanges recorded from the user's own code, matched on replay, and judged."""
