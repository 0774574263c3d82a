"""The suite's inputs: configuration, contract, cases, tool results, and the loaded suite."""
