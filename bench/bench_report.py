"""The HTML report of a large generated build: time to write it, its size, and a real headless
Chromium rendering it (every chart drawn, no console message), with a screenshot.

    uv run python bench/bench_report.py [--records 20000] [--seed 0]

Prints its figures; writes everything under bench/out/report-N/ (the screenshot is
report.png there). The same checks on the bundled build run in tests/report/test_html.py.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

from _common import EXCLUDE_KEY, OUT, ROOT, generate_corpus

sys.path.insert(0, str(ROOT / "tests"))
from browser import colour_pixels, open_page

CHART_COLOURS = {"lengths": "#4c72b0", "languages": "#55a868", "findings": "#dd8452"}


def curate(*args: str) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "curate.cli", "-q", *args], check=True, cwd=ROOT,
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    return time.perf_counter() - started


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--records", type=int, default=20_000)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    work = OUT / f"report-{args.records}"
    drops, dist = work / "drops", work / "dist"
    meta = generate_corpus(drops, args.records, args.seed, ["--preset", "warnings-only"])
    build_s = curate("build", str(drops), "--out", str(dist), "--no-cache", *EXCLUDE_KEY)
    html = dist / "report.html"
    build_size = html.stat().st_size
    report_s = curate("report", str(dist), "--sources", str(drops), "--output",
                      str(work / "report.html"))  # fmt: skip
    started = time.perf_counter()
    page = open_page(work / "report.html", work / "report.png")
    browser_s = time.perf_counter() - started
    pixels = colour_pixels(page.screenshot, CHART_COLOURS)
    print(f"records generated: {meta['records']:,} in {meta['files']} files")
    print(f"build (with report.html) : {build_s:6.1f} s wall, child process, cold, no cache")
    print(f"curate report            : {report_s:6.1f} s wall, child process (imports included)")
    print(f"report.html              : {build_size / 1024:,.0f} KiB (in the build)")
    print(f"chromium screenshot + DOM: {browser_s:6.1f} s")
    print(f"console messages         : {len(page.console)} {page.console[:3]}")
    print(f"svg charts in the DOM    : {page.dom.count('<svg')}")
    print(f"chart pixels             : {pixels}")
    print(f"all charts drawn         : {all(n > 500 for n in pixels.values())}")
    print(f"screenshot               : {page.screenshot}")


if __name__ == "__main__":
    main()
