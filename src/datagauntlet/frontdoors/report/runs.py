"""Read saved runs into one shape, whatever wrote them.

Three sources are understood: a `datagauntlet eval` output directory (`results.jsonl` plus
`summary.json`), a `calibrate --json` file (aggregate rows, no trajectories), and a verifiers
`traces.jsonl` from `vf-eval` on one of our envs. Every message is normalised to the OpenAI chat
shape, so the viewer, `show` and `rescore` read one format.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RESULTS_FILE = "results.jsonl"
SUMMARY_FILE = "summary.json"
TRACES_FILE = "traces.jsonl"
# Task attributes a report groups by, when a config or a task's data carries them.
ATTRIBUTE_KEYS = ("tier", "family", "families", "profile", "split")


class RunError(ValueError):
    """A path that is not a run this package can read; the message says what was expected."""


@dataclass
class Rollout:
    task_id: str
    rollout: int
    reward: float
    components: dict[str, float]
    seed: int | None = None
    split: str | None = None
    status: str = "ok"
    ref: str | None = None  # a held-out task's ref, saved instead of its seed
    metrics: dict[str, Any] = field(default_factory=dict)
    stop: str | None = None
    turns: int | None = None
    error: str | None = None
    messages: list[dict[str, Any]] = field(default_factory=list)
    attrs: dict[str, Any] = field(default_factory=dict)

    @property
    def failure_code(self) -> str | None:
        code = self.metrics.get("failure_code")
        return None if code in (None, "") else str(code)


@dataclass
class Run:
    name: str
    source: str
    kind: str  # "eval", "calibrate" or "verifiers"
    env: str
    config: dict[str, Any]
    model: str
    weights: dict[str, float]
    stamps: dict[str, Any] = field(default_factory=dict)
    rollouts: list[Rollout] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)  # calibrate's aggregate rows


def load_runs(paths: list[str]) -> list[Run]:
    runs: list[Run] = []
    for raw in paths:
        runs.extend(_load_path(Path(raw)))
    _name_uniquely(runs)
    return runs


def load_run(path: str) -> Run:
    """Exactly one run with trajectories (for `show` and `rescore`)."""
    runs = [r for r in _load_path(Path(path)) if r.kind != "calibrate"]
    if len(runs) != 1:
        raise RunError(f"{path}: expected one eval output or traces.jsonl, found {len(runs)} runs")
    return runs[0]


def _load_path(path: Path) -> list[Run]:
    if not path.exists():
        raise RunError(f"{path}: no such file or directory")
    if path.is_dir():
        if (path / RESULTS_FILE).is_file():
            return [_load_eval(path)]
        if (path / TRACES_FILE).is_file():
            return [_load_traces(path / TRACES_FILE)]
        raise RunError(
            f"{path}: not a run directory (expected {RESULTS_FILE} from `datagauntlet eval` "
            f"or {TRACES_FILE} from vf-eval)"
        )
    if path.name == RESULTS_FILE:
        return [_load_eval(path.parent)]
    head = _first_object(path)
    if head is not None and "traces" in head:
        return [_load_traces(path)]
    if head is not None and "rows" in head:
        return _load_calibrate(path)
    raise RunError(
        f"{path}: not a run file (expected an eval directory, a `calibrate --json` file or a "
        "vf-eval traces.jsonl)"
    )


def _json_lines(path: Path) -> Iterator[dict[str, Any]]:
    """Objects of a JSONL file; a torn or foreign line is skipped, never fatal."""
    with path.open(encoding="utf-8", errors="replace") as fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, dict):
                yield value


def _first_object(path: Path) -> dict[str, Any] | None:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise RunError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        value = json.loads(text)
    except ValueError:
        return next(_json_lines(path), None)
    if isinstance(value, list):
        return value[0] if value and isinstance(value[0], dict) else None
    return value if isinstance(value, dict) else None


def _weights_of(env_id: str, components: dict[str, float]) -> dict[str, float]:
    """The env's registered weights, when this package still knows the env."""
    from datagauntlet.core.registry import env_class

    try:
        return dict(env_class(env_id).weights)
    except (ValueError, ImportError, AttributeError):
        return {k: 1.0 / len(components) for k in components} if components else {}


def attributes_of(config: dict[str, Any], data: dict[str, Any] | None = None) -> dict[str, Any]:
    found = {k: config[k] for k in ATTRIBUTE_KEYS if k in config and config[k] is not None}
    for k, v in (data or {}).items():
        if k in ATTRIBUTE_KEYS and v is not None and isinstance(v, (str, int)):
            found[k] = v
    return found


# --- datagauntlet eval ------------------------------------------------------------------------
def _load_eval(directory: Path) -> Run:
    records = list(_json_lines(directory / RESULTS_FILE))
    latest: dict[tuple[str, int], dict[str, Any]] = {}
    for r in records:
        if "task_id" in r and "reward" in r:
            latest[(str(r["task_id"]), int(r.get("rollout", 0)))] = r
    if not latest:
        raise RunError(f"{directory / RESULTS_FILE}: no rollout records in it")
    first = next(iter(latest.values()))
    summary = {}
    if (directory / SUMMARY_FILE).is_file():
        try:
            summary = json.loads((directory / SUMMARY_FILE).read_text(encoding="utf-8"))
        except ValueError:
            summary = {}
    config = first.get("config") or {}
    rollouts = []
    for (_task, _n), r in sorted(latest.items()):
        rollouts.append(
            Rollout(
                task_id=str(r["task_id"]),
                rollout=int(r.get("rollout", 0)),
                reward=float(r.get("reward") or 0.0),
                components={k: float(v) for k, v in (r.get("components") or {}).items()},
                seed=r.get("seed"),
                ref=r.get("task_ref"),
                split=r.get("split"),
                status=str(r.get("status", "ok")),
                metrics=dict(r.get("metrics") or {}),
                stop=r.get("stop"),
                turns=r.get("turns"),
                error=r.get("error"),
                messages=list(r.get("messages") or []),
                attrs=attributes_of(config, r.get("task") or {"split": r.get("split")}),
            )
        )
    env_id = str(first.get("env", "?"))
    return Run(
        name=directory.name,
        source=str(directory),
        kind="eval",
        env=env_id,
        config=config,
        model=str(first.get("model", "?")),
        weights=_weights_of(env_id, rollouts[0].components),
        stamps=dict(first.get("versions") or summary.get("versions") or {}),
        rollouts=rollouts,
    )


# --- calibrate --json ---------------------------------------------------------------------------
def _load_calibrate(path: Path) -> list[Run]:
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        value = json.loads(text)
        blocks = value if isinstance(value, list) else [value]
    except ValueError:
        blocks = list(_json_lines(path))
    runs = runs_from_calibration(blocks, path.stem, str(path))
    if not runs:
        raise RunError(f"{path}: no calibration rows in it")
    return runs


def runs_from_calibration(blocks: list[Any], name: str, source: str = "") -> list[Run]:
    """One run per env block of `calibrate --json` output."""
    runs = []
    for block in blocks:
        if not isinstance(block, dict) or "rows" not in block:
            continue
        env_id = str(block.get("env", "?"))
        rows = [r for r in block["rows"] if isinstance(r, dict)]
        components = rows[0].get("components", {}) if rows else {}
        runs.append(
            Run(
                name=f"{name}:{env_id}",
                source=source or name,
                kind="calibrate",
                env=env_id,
                config={},
                model="calibration",
                weights=_weights_of(env_id, components),
                stamps=dict(block.get("versions") or {}),
                rows=rows,
            )
        )
    return runs


# --- verifiers traces.jsonl ---------------------------------------------------------------------
def _vf_message(node: dict[str, Any]) -> dict[str, Any] | None:
    message = node.get("message")
    if not isinstance(message, dict):
        return None
    out = {k: v for k, v in message.items() if k in ("role", "content", "tool_call_id")}
    calls = []
    for call in message.get("tool_calls") or []:
        if not isinstance(call, dict):
            continue
        fn = call.get("function") if isinstance(call.get("function"), dict) else call
        calls.append(
            {
                "id": call.get("id"),
                "type": "function",
                "function": {"name": fn.get("name"), "arguments": fn.get("arguments", "")},
            }
        )
    if calls:
        out["tool_calls"] = calls
    return out


def _load_traces(path: Path) -> Run:
    rollouts: list[Rollout] = []
    env_id, model, config = "?", "?", {}
    weights: dict[str, float] = {}
    counts: dict[str, int] = {}
    for episode in _json_lines(path):
        for trace in episode.get("traces") or []:
            if not isinstance(trace, dict):
                continue
            data = (trace.get("task") or {}).get("data") or {}
            env_id = str(data.get("env_id") or (episode.get("env") or {}).get("id") or env_id)
            config = dict(data.get("env_config") or config)
            model = str(((trace.get("agent") or {}).get("config") or {}).get("model") or model)
            rewards = trace.get("rewards") or {}
            components = {k: float(r.get("score", 0.0)) for k, r in rewards.items()}
            weights = {k: float(r.get("weight", 0.0)) for k, r in rewards.items()}
            task_id = str(data.get("id", f"task-{len(rollouts)}"))
            n = counts.get(task_id, 0)
            counts[task_id] = n + 1
            messages = [m for m in map(_vf_message, trace.get("nodes") or []) if m]
            errors = trace.get("errors") or []
            rollouts.append(
                Rollout(
                    task_id=task_id,
                    rollout=n,
                    reward=round(sum(components[k] * weights[k] for k in components), 6),
                    components=components,
                    seed=data.get("seed"),
                    ref=data.get("ref"),
                    split=data.get("split"),
                    status="ok" if trace.get("ok", True) and not errors else "failed",
                    metrics=dict(trace.get("metrics") or {}),
                    stop=trace.get("stop_condition"),
                    turns=sum(1 for m in messages if m.get("role") == "assistant"),
                    error="; ".join(str(e) for e in errors)[:2000] or None,
                    messages=messages,
                    attrs=attributes_of(config, data),
                )
            )
    if not rollouts:
        raise RunError(f"{path}: no traces in it")
    return Run(
        name=path.parent.name or path.stem,
        source=str(path),
        kind="verifiers",
        env=env_id,
        config=config,
        model=model,
        weights={k: w for k, w in weights.items() if w > 0} or weights,
        stamps={},
        rollouts=rollouts,
    )


def _name_uniquely(runs: list[Run]) -> None:
    seen: dict[str, int] = {}
    for run in runs:
        base = run.name
        seen[base] = seen.get(base, 0) + 1
        if seen[base] > 1:
            run.name = f"{base}#{seen[base]}"
