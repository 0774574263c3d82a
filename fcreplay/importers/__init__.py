"""Importers: suites and contracts written from other tools' formats and public benchmarks."""
