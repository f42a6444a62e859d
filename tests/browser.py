"""Open a page in a real headless Chromium: screenshot, console messages, the DOM after load.

Used by the report's test and by ``bench/bench_report.py``. Chromium comes from the
distribution (`apt-get install chromium`; `.ci/run` installs it). Without it, the tests marked
``chromium`` skip with one line saying so, except under CI (``CI`` set), where they fail: a CI
machine that lost its browser must not pass by skipping (tests/conftest.py).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
# Chromium logs every message of the page's console (console.error, an uncaught exception, a
# blocked fetch, a CSP violation) as a line with INFO:CONSOLE when --enable-logging is on.
CONSOLE = re.compile(r":CONSOLE[:(]\d*\)?\] (.*)")


MISSING = (
    "no Chromium on PATH: install the distribution's package (apt-get install -y chromium) or "
    "set CURATE_CHROMIUM; .ci/run does it"
)


def find() -> str | None:
    return os.environ.get("CURATE_CHROMIUM") or next(
        (p for p in map(shutil.which, CANDIDATES) if p), None
    )


def chromium() -> str:
    found = find()
    if not found:
        raise RuntimeError(MISSING)
    return found


@dataclass
class Page:
    screenshot: Path
    console: list[str]
    dom: str


def _run(args: list[str], profile: str) -> subprocess.CompletedProcess[str]:
    cmd = [
        chromium(),
        "--headless",
        "--no-sandbox",  # containers and CI runners run as root
        "--disable-gpu",
        "--hide-scrollbars",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--enable-logging=stderr",
        "--v=0",
        f"--user-data-dir={profile}",
        *args,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)


def open_page(
    html: Path, screenshot: Path, width: int = 1280, height: int = 2400, dump_dom: bool = True
) -> Page:
    """Screenshot ``html``; with ``dump_dom`` also load it again for the DOM after parsing."""
    url = html.resolve().as_uri()
    with tempfile.TemporaryDirectory(prefix="chromium-") as profile:
        shot = _run([f"--window-size={width},{height}", f"--screenshot={screenshot}", url], profile)
        dom = _run(["--dump-dom", url], profile) if dump_dom else None
    logs = shot.stderr + (dom.stderr if dom else "")
    if not screenshot.is_file():
        raise RuntimeError(f"Chromium wrote no screenshot: {shot.stderr[-2000:]}")
    return Page(screenshot, CONSOLE.findall(logs), dom.stdout if dom else "")


def colour_pixels(png: Path, colours: dict[str, str]) -> dict[str, int]:
    """How many pixels of the screenshot have exactly each colour (#rrggbb)."""
    from PIL import Image

    counts = dict.fromkeys(colours, 0)
    wanted = {tuple(int(c[i : i + 2], 16) for i in (1, 3, 5)): name for name, c in colours.items()}
    with Image.open(png) as image:
        for count, rgb in image.convert("RGB").getcolors(maxcolors=1 << 24) or []:
            if rgb in wanted:
                counts[wanted[rgb]] += count
    return counts
