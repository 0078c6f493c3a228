"""The HTML report in a real browser: it loads offline, a click opens a trajectory, and what it
shows is the run's data. Skips with the reason where no Chromium exists (CI installs one)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from report_cdp import Browser, find_browser
from report_helpers import cli, eval_run, records

import datagauntlet as dg

REPO = Path(__file__).resolve().parents[2]
READY = "document.body.dataset.ready === '1'"
HOSTILE = '</script><script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'


@pytest.fixture(scope="module")
def browser():
    exe = find_browser()
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("CI must install Chromium (.ci/run does: apt-get install chromium)")
        pytest.skip("no Chromium on this machine: apt-get install chromium to run browser tests")
    b = Browser(exe)
    b.send("Network.enable")
    b.send("Page.enable")
    yield b
    b.close()


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("report")
    naive = eval_run(root / "naive", "dirty-integration", "naive")
    careful = eval_run(root / "careful", "dirty-integration", "careful")
    # a model's output is data, never markup: plant hostile text in one trajectory
    lines = (naive / "results.jsonl").read_text().splitlines()
    last = max(range(len(lines)), key=lambda i: json.loads(lines[i])["task_id"])
    first = json.loads(lines[last])
    first["messages"][1]["content"] = HOSTILE
    lines[last] = json.dumps(first)
    (naive / "results.jsonl").write_text("\n".join(lines) + "\n")
    calib = root / "calibration.json"
    calib.write_text(
        cli("calibrate", "--env", "dirty-integration", "--seeds", "3", "--json").stdout
    )
    out = root / "report.html"
    cli("report", str(naive), str(careful), str(calib), "-o", str(out))
    hostile = sorted(r["task_id"] for r in records(naive)).index(first["task_id"])
    return {"html": out, "naive": records(naive), "careful": records(careful), "hostile": hostile}


def test_the_report_opens_offline_and_a_click_shows_the_trajectory(browser, report) -> None:
    browser.open(report["html"].as_uri(), READY)
    rows = browser.evaluate("document.querySelectorAll('#rollouts-table tbody tr').length")
    assert rows == len(report["naive"]) + len(report["careful"])
    # the naive run's second rollout: index 1 in the table, as loaded (sorted by task)
    record = sorted(report["naive"], key=lambda r: r["task_id"])[1]
    browser.click("#rollouts-table tbody tr[data-i='1']")
    browser.wait_for(
        f"document.querySelector('#trajectory h2').textContent.includes('{record['task_id']}')"
    )
    shown = browser.wait_for("document.querySelectorAll('#messages .message').length")
    assert shown == len(record["messages"])
    reward = browser.evaluate(
        "document.querySelector(\"#trajectory-head td[data-field='reward']\").textContent"
    )
    assert float(reward) == pytest.approx(record["reward"], abs=1e-4)
    tools = browser.evaluate(
        "[...document.querySelectorAll('#messages .tool-call')].map(e => e.dataset.tool)"
    )
    expected = [
        c["function"]["name"] for m in record["messages"] for c in m.get("tool_calls") or []
    ]
    assert tools == expected
    weights = {"completeness": 0.6, "type_handling": 0.2, "budget_discipline": 0.2}
    worst = max(record["components"], key=lambda k: weights[k] * (1 - record["components"][k]))
    top = browser.evaluate(
        "document.querySelector('#reward-lost tr[data-component]').dataset.component"
    )
    assert top == worst
    if os.environ.get("DG_UPDATE_SCREENSHOT"):
        browser.screenshot(REPO / "docs" / "img" / "report-trajectory.png")
    urls = browser.requested_urls()
    assert urls and all(u.startswith(("file:", "data:", "about:", "blob:")) for u in urls), urls


def test_hostile_text_in_a_trajectory_is_shown_never_run(browser, report) -> None:
    browser.open(report["html"].as_uri(), READY)
    browser.click(f"#rollouts-table tbody tr[data-i='{report['hostile']}']")
    browser.wait_for("document.querySelectorAll('#messages .message').length > 1")
    assert browser.evaluate("window.__pwned === undefined")
    text = browser.evaluate("document.querySelectorAll('#messages .message')[1].textContent")
    assert HOSTILE in text


def test_columns_sort_on_click(browser, report) -> None:
    browser.open(report["html"].as_uri(), READY)
    browser.click("#rollouts-table th[data-key='reward']")
    first = browser.evaluate(
        "+document.querySelector('#rollouts-table tbody tr td:nth-child(4)').textContent"
    )
    everything = [r["reward"] for r in report["naive"] + report["careful"]]
    assert first == pytest.approx(max(everything), abs=1e-4)
    browser.click("#rollouts-table th[data-key='reward']")
    first = browser.evaluate(
        "+document.querySelector('#rollouts-table tbody tr td:nth-child(4)').textContent"
    )
    assert first == pytest.approx(min(everything), abs=1e-4)
    comparison = browser.evaluate("document.querySelector('#comparisons h3').textContent")
    assert "careful minus naive" in comparison
    rows = 3 * len(dg.make("dirty-integration").policies())  # every policy on 3 profiles
    assert browser.evaluate("document.querySelectorAll('#calibration tbody tr').length") == rows
