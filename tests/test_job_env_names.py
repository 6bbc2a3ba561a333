"""The variables a job sees and the job labels a campaign sets are each declared once: a name of
`compute.jobenv.JOB_VARIABLES` is spelled as a string only in compute/jobenv.py (the setters use its
constants), and the `campaign`/`trial`/`holdout_of` job labels only in tracking/tags.py."""

from __future__ import annotations

import ast
from pathlib import Path

from compute.jobenv import JOB_VARIABLES

REPO = Path(__file__).resolve().parents[1]
PRODUCT = ("compute", "tracking", "skills", "autoresearch", "evals")
OWNERS = {Path("compute/jobenv.py")}
# The conformance suites check what a job saw against the names written out, on purpose; the torch
# probe's script runs from its path, importing nothing of ours, and sets torch.distributed's own variables.
CHECKS = {Path("compute/testing/backend_suite.py"), Path("compute/testing/jobs.py"),
          Path("compute/testing/_counter_job.py"), Path("compute/health/_torch_check.py")}


def _strings(path: Path) -> list[tuple[int, str]]:
    """Every string constant in the module that is not a docstring."""
    tree = ast.parse(path.read_text())
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)}  # fmt: skip
    docstrings |= {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}  # attribute docstrings
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings]  # fmt: skip


def _product_files() -> list[Path]:
    return [p.relative_to(REPO) for folder in PRODUCT for p in sorted((REPO / folder).rglob("*.py"))]


def test_job_variables_are_spelled_only_in_the_table() -> None:
    names = {v.name for v in JOB_VARIABLES}
    found = [f"{path}:{line}: {value!r}" for path in _product_files() if path not in OWNERS | CHECKS
             for line, value in _strings(REPO / path) if value in names]  # fmt: skip
    assert not found, "use the constant from compute/jobenv.py instead:\n" + "\n".join(found)


def test_campaign_job_labels_are_spelled_only_in_tracking_tags() -> None:
    labels = {"campaign", "trial", "holdout_of"}
    found = []
    for path in _product_files():
        tree = ast.parse((REPO / path).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.keyword) and node.arg == "labels" and isinstance(node.value, ast.Dict):
                found += [f"{path}:{key.lineno}: {key.value!r}" for key in node.value.keys
                          if isinstance(key, ast.Constant) and key.value in labels]  # fmt: skip
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
                    and isinstance(node.func.value, ast.Attribute) and node.func.value.attr == "labels"):
                found += [f"{path}:{a.lineno}: {a.value!r}" for a in node.args
                          if isinstance(a, ast.Constant) and a.value in labels]  # fmt: skip
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "labels" for t in node.targets) \
                    and isinstance(node.value, ast.Dict):
                found += [f"{path}:{key.lineno}: {key.value!r}" for key in node.value.keys
                          if isinstance(key, ast.Constant) and key.value in labels]  # fmt: skip
    assert not found, "use CAMPAIGN_LABEL / TRIAL_LABEL / HOLDOUT_OF_LABEL from tracking/tags.py:\n" + "\n".join(found)


def test_every_variable_names_its_setter_and_meaning() -> None:
    assert len({v.name for v in JOB_VARIABLES}) == len(JOB_VARIABLES)
    for var in JOB_VARIABLES:
        assert var.meaning and var.set_by, var
        setter = var.set_by.split()[0].rstrip(":")
        assert setter == "torchrun" or (REPO / setter).is_file(), f"{var.name}: set_by names no file {setter}"
