"""Every writer of results for people and machines: text, Markdown, JSON, CSV, JUnit and HTML."""
