"""`report.html` (`--report`) in headless Chromium (Debian's `chromium` and
`chromium-driver`, driven by Selenium; `.ci/run` installs them).

For `aqmlab run`, `sweep` and `reproduce`: the page loads from disk with no
console error and no request beyond the file itself, every plot draws its
series (pixels of the series' colours in each plot's canvas), zoom, hover
and legend toggles work, and every number in its tables equals the file it
comes from (`summary.json`, `sweep.csv`, `tables.csv`).
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import shutil
import statistics
import subprocess
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium")
DRIVER = shutil.which("chromedriver")
if os.environ.get("AQMLAB_REQUIRE_CHROMIUM") and not (CHROMIUM and DRIVER):
    raise RuntimeError("AQMLAB_REQUIRE_CHROMIUM is set but chromium or chromedriver is missing")
pytestmark = pytest.mark.skipif(
    not (CHROMIUM and DRIVER),
    reason="needs Debian's chromium and chromium-driver (apt-get install chromium "
    "chromium-driver; .ci/run installs them)",
)

# The first colours of report.js's palette (series 1 and 2).
PALETTE = [(0x1F, 0x77, 0xB4), (0xD6, 0x27, 0x28)]


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1200,900",
        f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}",
    ]:
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(DRIVER), options=opts)
    yield driver
    driver.quit()


def load(browser, page: Path) -> int:
    """Open `page`; check it drew every plot with no console error and
    fetched nothing; returns the number of plots."""
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get_log("browser")  # drop what an earlier page logged
    browser.get(page.as_uri())
    WebDriverWait(browser, 20).until(
        lambda d: d.find_element("tag name", "body").get_attribute("data-plots-drawn")
    )
    charts = len(browser.find_elements("css selector", ".chart"))
    drawn = int(browser.find_element("tag name", "body").get_attribute("data-plots-drawn"))
    assert drawn == charts > 0
    errors = [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]
    assert errors == []
    assert browser.execute_script("return window.aqmlabErrors") == []
    fetched = browser.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name)"
    )
    assert fetched == []
    return charts


def series_pixels(browser, chart) -> list[int]:
    """Pixels of each palette colour (±24 per channel) in a chart's canvas."""
    from PIL import Image

    canvas = chart.find_element("css selector", "canvas")
    img = Image.open(io.BytesIO(canvas.screenshot_as_png)).convert("RGB")
    data = img.tobytes()
    counts = [0] * len(PALETTE)
    for i in range(0, len(data), 3):
        r, g, b = data[i], data[i + 1], data[i + 2]
        if r > 230 and g > 230 and b > 230:
            continue  # background
        for k, (cr, cg, cb) in enumerate(PALETTE):
            if abs(r - cr) <= 24 and abs(g - cg) <= 24 and abs(b - cb) <= 24:
                counts[k] += 1
    return counts


def cells(browser) -> list[tuple[str, str | None, str]]:
    return browser.execute_script(
        "return Array.from(document.querySelectorAll('td[data-key]'))"
        ".map(td => [td.dataset.key, td.dataset.value === undefined ? null : "
        "td.dataset.value, td.textContent])"
    )


def shown(text: str, value: float) -> None:
    """The cell's text is the value to 6 significant digits."""
    if text == "—":
        assert not math.isfinite(value)
    else:
        assert float(text) == pytest.approx(value, rel=6e-6, abs=1e-300)


def pointer(doc: object, ptr: str) -> object:
    for seg in ptr.split("/")[1:]:
        seg = seg.replace("~1", "/").replace("~0", "~")
        doc = doc[int(seg)] if isinstance(doc, list) else doc[seg]  # type: ignore[index]
    return doc


def numbers(doc: object, ptr: str = "") -> dict[str, float]:
    """Every number of a JSON document by its JSON pointer."""
    if isinstance(doc, dict):
        out: dict[str, float] = {}
        for k, v in doc.items():
            out |= numbers(v, f"{ptr}/{k.replace('~', '~0').replace('/', '~1')}")
        return out
    if isinstance(doc, list):
        out = {}
        for i, v in enumerate(doc):
            out |= numbers(v, f"{ptr}/{i}")
        return out
    if isinstance(doc, (int, float)) and not isinstance(doc, bool):
        return {ptr: doc}
    return {}


def test_run_report(cli: str, repo: Path, tmp_path: Path, browser) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    out = tmp_path / "run"
    subprocess.run(
        [cli, "run", str(repo / "scenarios/bbr/coexistence.toml"), "--out", str(out),
         "--report", "--set", "duration=5s", "--set", "output.throughput_bin=200ms",
         "--set", "flows.0.trace_cwnd=true"],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    assert load(browser, out / "report.html") == 5  # length, delay, cwnd, throughput, CDFs
    browser.save_screenshot(str(tmp_path / "run.png"))
    charts = browser.find_elements("css selector", ".chart")
    for chart in charts:
        browser.execute_script("arguments[0].scrollIntoView()", chart)
        assert max(series_pixels(browser, chart)) > 200, chart.get_attribute("id")

    # Every number of summary.json (but the machine's measurements:
    # wall_seconds, timings, parallel) is in a cell that names it, with the exact
    # value, shown to 6 significant digits.
    summary = json.loads((out / "summary.json").read_text())
    want = {
        k: v
        for k, v in numbers(summary).items()
        if k != "/wall_seconds" and not k.startswith("/parallel/") and not k.startswith("/timings/")
    }
    got = {k: (v, t) for k, v, t in cells(browser) if v is not None}
    assert set(got) == set(want)
    for k, x in want.items():
        v, t = got[k]
        assert float(v) == x, k
        shown(t, x)
    assert pointer(summary, "/totals/goodput_bps") == want["/totals/goodput_bps"]

    # The first plot (queue length; the bottleneck r1->r2 is series 2, red):
    # hover shows values, a drag zooms in, a legend click hides the series.
    chart = charts[0]
    browser.execute_script("arguments[0].scrollIntoView()", chart)
    over = chart.find_element("css selector", ".u-over")
    ActionChains(browser).move_to_element_with_offset(over, 40, 0).perform()
    legend = chart.find_elements("css selector", ".u-legend .u-series")
    assert legend[2].find_element("css selector", ".u-value").text not in ("", "--")
    span = "var s = window.aqmlabPlots[0].scales.x; return s.max - s.min"
    full = browser.execute_script(span)
    drag = ActionChains(browser).move_to_element_with_offset(over, -100, 0).click_and_hold()
    drag.move_by_offset(150, 0).release().perform()
    assert 0 < browser.execute_script(span) < full / 2
    before = series_pixels(browser, chart)[1]
    assert before > 200
    legend[2].click()
    assert "u-off" in legend[2].get_attribute("class")
    assert series_pixels(browser, chart)[1] < before / 10


def test_sweep_report(cli: str, repo: Path, tmp_path: Path, browser) -> None:
    out = tmp_path / "sweep"
    subprocess.run(
        [cli, "sweep", str(repo / "scenarios/aqm-compare.toml"), "--out", str(out),
         "--seeds", "2", "--set", "duration=3s", "--report"],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    assert load(browser, out / "report.html") == 8  # one plot per metric
    browser.save_screenshot(str(tmp_path / "sweep.png"))
    for chart in browser.find_elements("css selector", ".chart"):
        browser.execute_script("arguments[0].scrollIntoView()", chart)
        assert series_pixels(browser, chart)[0] > 50, chart.get_attribute("id")

    # Means, sd and 95 % half-widths over the 2 seeds, from sweep.csv.
    runs: dict[str, list[dict[str, str]]] = {}
    with open(out / "sweep.csv") as f:
        for r in csv.DictReader(f):
            runs.setdefault(r["run_dir"].rsplit("/seed-", 1)[0], []).append(r)
    page = {k: (float(v) if v else math.nan, t) for k, v, t in cells(browser)}
    t975_1 = 12.706204736174698  # Student's t, 0.975 quantile, 1 degree of freedom
    checked = 0
    for label, rs in runs.items():
        assert len(rs) == 2
        for key, scale in [("mean_delay_s", 1e3), ("drop_rate", 1.0), ("goodput_bps", 1e-6)]:
            xs = [float(r[key]) * scale for r in rs]
            mean, sd = statistics.fmean(xs), statistics.stdev(xs)
            for what, x in [("mean", mean), ("sd", sd), ("ci95", t975_1 * sd / math.sqrt(2))]:
                v, t = page[f"{label}|{key}|{what}"]
                assert v == pytest.approx(x, rel=1e-9, abs=1e-12), (label, key, what)
                shown(t, v)
                checked += 1
    assert checked == 8 * 3 * 3


def test_reproduce_report(cli: str, tmp_path: Path, browser) -> None:
    out = tmp_path / "red"
    subprocess.run(
        [cli, "reproduce", "red-gateway", "--seeds", "2", "--out", str(out), "--report"],
        check=True, capture_output=True, timeout=600,
    )  # fmt: skip
    n = load(browser, out / "report.html")
    with open(out / "tables.csv") as f:
        rows = list(csv.DictReader(f))
    assert n == len({(r["table"], r["unit"]) for r in rows})
    for chart in browser.find_elements("css selector", ".chart"):
        browser.execute_script("arguments[0].scrollIntoView()", chart)
        blue, red = series_pixels(browser, chart)
        assert blue > 20 and red > 20, chart.get_attribute("id")  # paper and aqmlab

    page = {k: (v, t) for k, v, t in cells(browser)}
    for i, r in enumerate(rows):
        for col in ["paper", "aqmlab_mean", "aqmlab_sd", "n"]:
            v, t = page[f"tables.csv/{i}/{col}"]
            if r[col] == "":
                assert v is None and t == "—"
            else:
                assert float(v) == float(r[col]), (i, col)
                shown(t, float(r[col]))
    # report.md, verdicts included, is in the page: each of its headings.
    text = browser.find_element("css selector", ".md").text
    md = (out / "report.md").read_text()
    heads = [h.lstrip("#").strip() for h in md.splitlines() if h.startswith("## ")]
    assert heads and all(h in text for h in heads)
    assert "agree" in text
