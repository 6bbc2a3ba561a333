"""Conformance suites and fakes shipped with autoresearch (like `optuna/testing/`).

Each suite module holds plain test functions that a test module imports, with the fixtures
its docstring names (e.g. `autoresearch.testing.provider_suite`). Nothing is imported here.
"""
