"""Running a suite: plan, transports, players, the conversation loop, attempts, the runner."""
