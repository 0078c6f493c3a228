"""One self-contained HTML file: summaries, plots, breakdowns, comparisons, a per-task table and
a trajectory viewer. It makes no network request: plotly.js, the data and the viewer are inline.

Trajectories are the bulk of a run, so they are stored gzip-compressed in chunks and inflated by
the browser only when one is opened; long tool outputs are folded. Every string from a run is
inserted as text, never as markup, so a model's output cannot script the page.
"""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import Any

from datagauntlet import __version__
from datagauntlet.core.output_files import write_output
from datagauntlet.frontdoors.report.runs import Rollout, Run
from datagauntlet.frontdoors.report.stats import breakdowns, comparisons, reward_lost, summarize

CHUNK = 100  # trajectories per compressed block
FOLD_CHARS = 20_000  # a message's text past this is cut from the report (the run keeps it)


def _safe_json(value: Any) -> str:
    """JSON that can sit inside a <script> element whatever strings it holds."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _fold(text: Any) -> Any:
    if isinstance(text, str) and len(text) > FOLD_CHARS:
        return text[:FOLD_CHARS] + f"\n… {len(text) - FOLD_CHARS:,} more characters folded"
    return text


def _folded_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for m in messages:
        item = {k: _fold(v) for k, v in m.items() if k != "tool_calls"}
        if m.get("tool_calls"):
            item["tool_calls"] = [
                {
                    "id": c.get("id"),
                    "name": (c.get("function") or {}).get("name"),
                    "arguments": _fold((c.get("function") or {}).get("arguments")),
                }
                for c in m["tool_calls"]
                if isinstance(c, dict)
            ]
        out.append(item)
    return out


def _trajectory(rollout: Rollout, weights: dict[str, float]) -> dict[str, Any]:
    return {
        "messages": _folded_messages(rollout.messages),
        "metrics": rollout.metrics,
        "error": rollout.error,
        "lost": reward_lost(rollout, weights),
    }


def _chunks(items: list[dict[str, Any]]) -> list[str]:
    blocks = []
    for start in range(0, len(items), CHUNK):
        raw = json.dumps(items[start : start + CHUNK], ensure_ascii=False, default=str)
        blocks.append(base64.b64encode(gzip.compress(raw.encode("utf-8", "replace"), 6)).decode())
    return blocks


def _config_label(row: dict[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in (row.get("config") or {}).items())


def _figures(runs: list[Run], summaries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    import plotly.graph_objects as go
    import plotly.io as pio

    figs: list[tuple[str, Any]] = []
    traced = [r for r in runs if r.rollouts]
    if traced:
        dist = go.Figure()
        for run in traced:
            dist.add_trace(
                go.Histogram(
                    x=[r.reward for r in run.rollouts],
                    name=run.name,
                    opacity=0.65,
                    xbins={"start": 0, "end": 1.0001, "size": 0.05},
                )
            )
        dist.update_layout(
            barmode="overlay",
            title="Reward distribution",
            xaxis={"title": "reward", "range": [0, 1.02]},
            yaxis_title="rollouts",
        )
        figs.append(("reward-distribution", dist))
        comp = go.Figure()
        for run, summary in zip(runs, summaries, strict=True):
            if run.rollouts:
                names = list(summary["components"])
                comp.add_trace(
                    go.Bar(x=names, y=[summary["components"][n] for n in names], name=run.name)
                )
        comp.update_layout(
            barmode="group", title="Mean of each component", yaxis={"range": [0, 1.05]}
        )
        figs.append(("components", comp))
    calib = [r for r in runs if r.kind == "calibrate"]
    if calib:
        fig = go.Figure()
        for run in calib:
            labels = [f"{row.get('policy')} {_config_label(row)}" for row in run.rows]
            fig.add_trace(
                go.Bar(x=labels, y=[row.get("mean_reward", 0) for row in run.rows], name=run.env)
            )
        fig.update_layout(title="Calibration: mean reward per policy", yaxis={"range": [0, 1.05]})
        figs.append(("calibration", fig))
    return [{"id": name, "figure": json.loads(pio.to_json(fig))} for name, fig in figs]


def build_report(runs: list[Run]) -> str:
    from plotly.offline import get_plotlyjs

    summaries = [summarize(r) for r in runs]
    table: list[dict[str, Any]] = []
    trajectories: list[dict[str, Any]] = []
    for run_index, run in enumerate(runs):
        for r in run.rollouts:
            table.append(
                {
                    "i": len(table),
                    "run": run_index,
                    "task": r.task_id,
                    "n": r.rollout,
                    "reward": r.reward,
                    "status": r.status,
                    "stop": r.stop,
                    "turns": r.turns,
                    "failure": r.failure_code,
                    "components": r.components,
                    "attrs": r.attrs,
                }
            )
            trajectories.append(_trajectory(r, run.weights))
    data = {
        "version": __version__,
        "runs": summaries,
        "calibration": [
            {"run": i, "rows": run.rows} for i, run in enumerate(runs) if run.kind == "calibrate"
        ],
        "breakdowns": [breakdowns(r) for r in runs],
        "comparisons": comparisons(runs),
        "rollouts": table,
        "chunk": CHUNK,
        "figures": _figures(runs, summaries),
    }
    assets = resources.files("datagauntlet.frontdoors.report")
    style = assets.joinpath("report.css").read_text(encoding="utf-8")
    viewer = assets.joinpath("report.js").read_text(encoding="utf-8")
    blocks = "\n".join(
        f'<script type="application/octet-stream" id="traj-{k}">{b}</script>'
        for k, b in enumerate(_chunks(trajectories))
    )
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; "
        "script-src 'unsafe-inline' 'unsafe-eval'; style-src 'unsafe-inline'; img-src data:\">"
        f"<title>datagauntlet report</title><style>{style}</style></head><body>"
        "<header><h1>datagauntlet report</h1><p id='subtitle'></p></header>"
        "<main id='app'></main>"
        f"<script>{get_plotlyjs()}</script>"
        f'<script type="application/json" id="report-data">{_safe_json(data)}</script>'
        f"{blocks}<script>{viewer}</script></body></html>\n"
    )


def write_report(
    runs: list[Run], out: Path, inputs: Iterable[str | Path] = (), force: bool = False
) -> int:
    """Write the report atomically, never over one of `inputs` nor, unless `force`, over an
    existing file; returns its size in bytes."""
    return write_output(out, build_report(runs), inputs, force)
