"""Headless Chromium for the browser tests (the dashboard's and report.html's): Debian's chromium
and chromium-driver, driven by selenium (the `ui` extra).

`require_browser()` at a test module's top skips it, saying what to install, when any is missing;
with AR_REQUIRE_BROWSER=1 (set by .ci/run) it does not skip, so CI fails instead. `chrome()` is
one browser with its console log kept. `screenshots(prefix)` is where screenshots go: a temporary
folder, or AR_UI_SCREENSHOTS (e.g. docs/img) to refresh the docs' images.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest


def require_browser() -> None:
    missing = [name for name in ("chromium", "chromedriver") if shutil.which(name) is None]
    if importlib.util.find_spec("selenium") is None:
        missing.append("selenium (pip install -e '.[ui]')")
    if missing and os.environ.get("AR_REQUIRE_BROWSER") != "1":
        pytest.skip(f"browser tests need {', '.join(missing)}: apt-get install -y chromium chromium-driver",
                    allow_module_level=True)  # fmt: skip


def screenshots(prefix: str) -> Path:
    return Path(os.environ.get("AR_UI_SCREENSHOTS") or tempfile.mkdtemp(prefix=prefix))


@contextmanager
def chrome() -> Iterator[Any]:
    from selenium import webdriver

    options = webdriver.ChromeOptions()
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900"):
        options.add_argument(flag)
    options.binary_location = shutil.which("chromium") or "chromium"
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(shutil.which("chromedriver")))
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()
