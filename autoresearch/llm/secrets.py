"""Keeping API keys out of errors, logs, MLflow params and reports.

`redact` removes every registered secret value, the values of environment variables whose
names look like credentials, and strings shaped like provider keys (`sk-...`, `sk-ant-...`).
Providers register the key they read, so even a key with an unusual shape is caught.
"""

from __future__ import annotations

import os
import re
import threading

REDACTED = "[REDACTED]"

_KEY_PATTERN = re.compile(r"\b(?:sk-ant-|sk-proj-|sk-)[A-Za-z0-9_\-]{8,}")
_SECRET_ENV_NAME = re.compile(r"(API_KEY|_TOKEN|_SECRET|_PASSWORD)$", re.IGNORECASE)
_MIN_SECRET_LEN = 8  # shorter values would redact ordinary words

_lock = threading.Lock()
_registered: set[str] = set()


def register_secret(value: str | None) -> None:
    """Remember a secret value (an API key read from the environment) so `redact` removes it."""
    if value and len(value) >= _MIN_SECRET_LEN:
        with _lock:
            _registered.add(value)


def _secret_values() -> list[str]:
    with _lock:
        values = set(_registered)
    for name, value in os.environ.items():
        if _SECRET_ENV_NAME.search(name) and len(value) >= _MIN_SECRET_LEN:
            values.add(value)
    # Longest first, so a key that contains another registered value is removed whole.
    return sorted(values, key=len, reverse=True)


def redact(text: object) -> str:
    """`text` as a string with every known secret and key-shaped token replaced by [REDACTED]."""
    out = str(text)
    for value in _secret_values():
        out = out.replace(value, REDACTED)
    return _KEY_PATTERN.sub(REDACTED, out)
