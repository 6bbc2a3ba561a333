"""The health package's public names, and that importing it never imports torch."""

from __future__ import annotations

import subprocess
import sys

import compute.health as health


def test_all_public_names_are_exported():
    public = {n for n in dir(health) if not n.startswith("_") and n not in {"annotations"}}
    modules = {n for n in public if type(getattr(health, n)).__name__ == "module"}
    assert set(health.__all__) == public - modules


def test_importing_health_does_not_import_torch():
    code = "import sys, compute.health; assert 'torch' not in sys.modules, 'torch imported'"
    subprocess.run([sys.executable, "-c", code], check=True)
