"""Campaign reports: Markdown with PNG plots (best so far, importances, failures) and MLflow links."""

from autoresearch.report.markdown import MIN_TRIALS_FOR_IMPORTANCE, write_report

__all__ = ["MIN_TRIALS_FOR_IMPORTANCE", "write_report"]
