"""The HTML report: its content (no browser) and, in headless Chromium, that it renders and works.

The browser test drives Debian's ``chromium`` (``.ci/run`` installs it) through Playwright for Python, never
a browser Playwright would download. It checks that the charts rendered, that clicking a pod opens its
drill-down with the filter verdicts, and saves a screenshot to ``tests/artifacts/`` (git-ignored). It skips,
saying why, only where no Chromium exists.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from tests.test_cli import DEMO, ETL_MESSAGE, ROOT, ok, run

ARTIFACTS = ROOT / "tests" / "artifacts"
CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _island(html: str, name: str) -> object:
    m = re.search(rf'<script id="{name}" type="application/json">(.*?)</script>', html, re.S)
    assert m, name
    return json.loads(m.group(1))


@pytest.fixture(scope="module")
def demo_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("report") / "demo.html"
    ok("simulate", DEMO, "--report", str(path))
    return path


def test_report_is_self_contained(demo_report: Path) -> None:
    html = demo_report.read_text(encoding="utf-8")
    assert not re.search(r'<(script|link|img)[^>]+(src|href)="(https?:)?//', html)  # nothing fetched at view time
    assert "Plotly" in html and html.count("<script") >= 4


def test_report_shows_the_shared_summary(demo_report: Path) -> None:
    html = demo_report.read_text(encoding="utf-8")
    summary = json.loads(ok("simulate", DEMO, "-o", "json"))["summary"]
    for label, key in (("scheduled", "scheduled"), ("unschedulable", "unschedulable"), ("gated", "gated")):
        assert f"<b>{summary['counts'][key]}</b>{label}</div>" in html
    charts = _island(html, "charts-data")
    assert set(charts) == {"nodes", "zones", "reasons"}
    node_bars = charts["nodes"]["data"]
    assert [t["name"] for t in node_bars] == ["cpu", "memory", "pods"]
    assert node_bars[0]["x"] == ["node-1", "node-2", "node-3", "node-4"]
    assert node_bars[0]["y"] == [100.0, 87.5, 25.0, 50.0]  # 4/4, 3.5/4, 1/4, 2/4 cores
    reasons = charts["reasons"]["data"][0]
    assert sorted(reasons["customdata"]) == sorted(r["message"] for r in summary["reasons"])
    pods = {p["pod"]: p for p in _island(html, "pods-data")}
    assert len(pods) == 7 and pods["shop/etl-1"]["reason"] == ETL_MESSAGE
    etl = pods["shop/etl-1"]["cycles"][-1]["filter"]
    assert etl["plugins"] == ["TaintToleration", "NodeResourcesFit"]
    assert [(g["count"], g["result"]) for g in etl["groups"]] == [(3, "rejected by NodeResourcesFit"),
                                                                  (1, "rejected by TaintToleration")]
    web1 = pods["shop/web-1"]["cycles"][-1]["scores"]
    assert web1["rows"][0] == {"rank": 1, "node": "node-1", "total": 498, "selected": True,
                               "plugins": web1["rows"][0]["plugins"]}


def test_report_does_not_change_what_is_printed(tmp_path: Path) -> None:
    assert ok("simulate", DEMO, "-o", "json", "--report", str(tmp_path / "r.html")) == ok("simulate", DEMO, "-o", "json")


def test_unwritable_report_is_an_input_error(tmp_path: Path) -> None:
    result = run("simulate", DEMO, "--report", str(tmp_path / "no" / "such" / "dir" / "r.html"))
    assert result.exit_code == 2
    assert "cannot write the report" in result.stderr


def test_large_clusters_use_a_heat_map() -> None:
    from pysched.report.html import BARS_UP_TO, _usage_figure
    from pysched.report.summary import NodeUsage

    rows = [NodeUsage(f"n{i}", 1, 10, 500, 1000, 1, 4) for i in range(BARS_UP_TO + 1)]
    fig = _usage_figure(rows, "node")
    assert fig["data"][0]["type"] == "heatmap" and fig["data"][0]["z"][0][0] == 50.0


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on this machine (.ci/run installs Debian's chromium)")
def test_report_in_a_real_browser(demo_report: Path, tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not installed")
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 900}, offline=True)
        try:
            page = browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(demo_report.as_uri())
            for chart in ("nodes", "zones", "reasons"):
                page.wait_for_selector(f"#chart-{chart} .main-svg", timeout=15_000)
            # the bars were drawn: plotly draws one path per bar
            assert page.locator("#chart-nodes .bars path").count() >= 12  # 4 nodes x cpu/memory/pods
            assert page.locator("#chart-reasons .bars path").count() == 2
            assert page.locator("#pods tbody tr").count() == 7
            page.screenshot(path=str(ARTIFACTS / "report-demo.png"), full_page=True)

            page.locator("#pods tbody tr", has_text="shop/etl-1").click()
            drill = page.locator("#drill")
            drill.wait_for(state="visible", timeout=5_000)
            assert "shop/etl-1" in drill.locator("h2").inner_text()
            matrix = drill.locator("table.filter-matrix").first
            text = matrix.inner_text()
            assert "TaintToleration" in text and "NodeResourcesFit" in text
            assert "Insufficient cpu" in text and "untolerated taint {dedicated: gpu}" in text
            page.screenshot(path=str(ARTIFACTS / "report-demo-drilldown.png"))

            page.keyboard.press("Escape")
            page.fill("#filter", "trainer")
            assert page.locator("#pods tbody tr").count() == 2
            page.fill("#filter", "")
            page.locator("th[data-key=prio]").click()
            page.locator("th[data-key=prio]").click()  # descending
            assert page.locator("#pods tbody tr").first.inner_text().split("\t")[1] == "shop/checkout-1"
            assert errors == []
        finally:
            browser.close()


@pytest.mark.parametrize(("args", "charts", "expected"), [
    (["explain", "shop/etl-1", "-f", DEMO], [], ["Filter verdicts on 4 nodes", "What would make it fit"]),
    (["diff", "default", str(ROOT / "fixtures" / "demo-config-binpack.yaml"), "-f", DEMO],
     ["nodes-cpu", "nodes-memory", "nodes-pods"], ["Verdict per metric", "shop/web-1"]),
    (["capacity", str(ROOT / "fixtures" / "cluster-capacity" / "cluster.yaml"), "--pod",
      str(ROOT / "fixtures" / "cluster-capacity" / "pod.yaml")], ["copies-0"], ["Copies per node", "kube-node-1"]),
], ids=["explain", "diff", "capacity"])
def test_other_commands_write_reports(tmp_path: Path, args: list[str], charts: list[str], expected: list[str]) -> None:
    path = tmp_path / "r.html"
    result = run(*args, "--report", str(path), "-q")
    assert result.exit_code in (0, 3), result.output
    html = path.read_text(encoding="utf-8")
    assert sorted(_island(html, "charts-data")) == sorted(charts)
    for text in expected:
        assert text in html
    assert not re.search(r'<(script|link|img)[^>]+(src|href)="(https?:)?//', html)


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on this machine (.ci/run installs Debian's chromium)")
def test_diff_report_in_a_real_browser(tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not installed")
    path = tmp_path / "diff.html"
    ok("diff", "default", str(ROOT / "fixtures" / "demo-config-binpack.yaml"), "-f", DEMO, "--report", str(path))
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 900}, offline=True)
        try:
            page = browser.new_page()
            page.goto(path.as_uri())
            page.wait_for_selector("#chart-nodes-cpu .main-svg", timeout=15_000)
            assert page.locator("#chart-nodes-cpu .bars path").count() >= 8  # 4 nodes x A and B
            assert page.locator("table").count() >= 3
            page.screenshot(path=str(ARTIFACTS / "report-diff.png"), full_page=True)
        finally:
            browser.close()
