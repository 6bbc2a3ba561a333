"""The conformance suites shipped in the packages (`*/testing/*_suite.py`: backend, probe, tracker,
ledger, policy, provider) share one style: a suite is a class `<Protocol>Suite` of `test_<rule>`
methods taking the fixture(s) the suite names; a test module subclasses it once and gives those
fixtures, parametrized over the implementations. No star-imported test functions, no lists of checks."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUITES = sorted(p for p in ROOT.glob("*/testing/*_suite.py") if p.parts[-3] != "tests")


def _suite_classes(path: Path) -> tuple[list[str], list[str]]:
    """(the suite classes, what breaks the style) of one suite module."""
    tree = ast.parse(path.read_text())
    where = path.relative_to(ROOT)
    classes, problems = [], []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith(("test_", "check_")):
            problems.append(f"{where}:{node.lineno}: {node.name} is a module-level function, not a method of a *Suite class")
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and "CHECKS" in ast.unparse(node).split("=")[0]:
            problems.append(f"{where}:{node.lineno}: a CHECKS list; the suite class's test_ methods are the cases")
        if isinstance(node, ast.ClassDef) and node.name.endswith("Suite"):
            classes.append(node.name)
            methods = [n for n in node.body if isinstance(n, ast.FunctionDef)]
            problems += [f"{where}:{m.lineno}: {node.name}.{m.name} is not named test_<rule>"
                         for m in methods if not m.name.startswith(("test_", "_"))]  # fmt: skip
    if not classes:
        problems.append(f"{where}: no <Protocol>Suite class")
    return classes, problems


def test_the_suites_are_found():
    assert {p.stem for p in SUITES} >= {"backend_suite", "probe_suite", "tracker_suite", "ledger_suite",
                                        "policy_suite", "provider_suite"}  # fmt: skip


def test_every_suite_is_a_class_of_test_methods_that_one_test_module_subclasses():
    tests = [p.read_text() for p in (ROOT / "tests").rglob("test_*.py")]
    problems = []
    for path in SUITES:
        classes, found = _suite_classes(path)
        problems += found
        for name in classes:
            users = sum(f"({name}):" in text for text in tests)
            if users != 1:
                problems.append(f"{path.relative_to(ROOT)}: {name} is subclassed by {users} test modules, not one")
    assert not problems, "conformance suites out of the shared style:\n" + "\n".join(problems)
