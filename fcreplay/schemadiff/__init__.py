"""Schema diff: the tool declarations requests sent, classified against the canonical contract."""
