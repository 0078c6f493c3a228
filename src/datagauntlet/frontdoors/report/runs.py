"""Read saved runs into one shape, whatever wrote them.

Three sources are understood: a `datagauntlet eval` output directory (`results.jsonl` plus
`summary.json`), a `calibrate --json` file (aggregate rows, no trajectories), and a verifiers
`traces.jsonl` from `vf-eval` on one of our envs. Every message is normalised to the OpenAI chat
shape, so the viewer, `show` and `rescore` read one format.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from datagauntlet.core.user_files import FileRefused, json_lines, parse_json, read_text
from datagauntlet.frontdoors.report.run_schema import (
    Fields,
    RunError,
    calibration_row,
    chat_message,
    messages_of,
    result_record,
)

RESULTS_FILE = "results.jsonl"
SUMMARY_FILE = "summary.json"
TRACES_FILE = "traces.jsonl"
RUN_FILES = (RESULTS_FILE, SUMMARY_FILE, TRACES_FILE)  # what a run directory is read for
# A run file is read whole; past this it is refused rather than read without end.
MAX_RUN_FILE_BYTES = 256 << 20
# Task attributes a report groups by, when a config or a task's data carries them.
ATTRIBUTE_KEYS = ("tier", "family", "families", "profile", "split")
__all__ = ["Rollout", "Run", "RunError", "load_run", "load_runs", "runs_from_calibration"]


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
        if (path / RESULTS_FILE).exists():
            return [_load_eval(path)]
        if (path / TRACES_FILE).exists():
            return [_load_traces(path / TRACES_FILE, _objects(path / TRACES_FILE))]
        raise RunError(
            f"{path}: not a run directory (expected {RESULTS_FILE} from `datagauntlet eval` "
            f"or {TRACES_FILE} from vf-eval)"
        )
    if path.name == RESULTS_FILE:
        return [_load_eval(path.parent)]
    blocks = _objects(path)
    head = blocks[0][1] if blocks and isinstance(blocks[0][1], dict) else None
    if head is not None and "traces" in head:
        return [_load_traces(path, blocks)]
    if head is not None and "rows" in head:
        return _load_calibrate(path, [b for _, b in blocks])
    raise RunError(
        f"{path}: not a run file (expected an eval directory, a `calibrate --json` file or a "
        "vf-eval traces.jsonl)"
    )


def _read(path: Path) -> str:
    return read_text(path, MAX_RUN_FILE_BYTES, "run file")


def _objects(path: Path) -> list[tuple[int, Any]]:
    """(line, value) of a file holding one JSON document (an array is its elements, all on line
    1) or JSON lines; a torn last line (an interrupted write) is dropped."""
    text = _read(path)
    try:
        whole = parse_json(text, str(path))
    except FileRefused as exc:
        if "nested deeper" in str(exc):
            raise
        out: list[tuple[int, Any]] = []
        try:
            out.extend(json_lines(text, str(path), skip_torn=True))
        except FileRefused as exc:
            if out:
                raise
            raise RunError(f"{path}: not a run file, not even JSON ({exc})") from None
        return out
    return [(1, v) for v in whole] if isinstance(whole, list) else [(1, whole)]


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
    path = directory / RESULTS_FILE
    latest: dict[tuple[str, int], Fields] = {}
    for n, obj in json_lines(_read(path), str(path), skip_torn=True):
        r = Fields(result_record(obj, f"{path}:{n}"), f"{path}:{n}")
        if r.has("task_id") and r.has("reward"):
            latest[(str(r.label("task_id")), r.integer("rollout", 0) or 0)] = r
    if not latest:
        raise RunError(f"{path}: no rollout records in it")
    summary = Fields({}, str(directory / SUMMARY_FILE))
    if (directory / SUMMARY_FILE).exists():
        where = str(directory / SUMMARY_FILE)
        summary = Fields(parse_json(_read(directory / SUMMARY_FILE), where), where)
    first = next(iter(latest.values()))
    config = first.mapping("config")
    rollouts = [_eval_rollout(r, config) for _, r in sorted(latest.items())]
    env_id = first.text("env", "?") or "?"
    return Run(
        name=directory.name,
        source=str(directory),
        kind="eval",
        env=env_id,
        config=config,
        model=first.text("model", "?") or "?",
        weights=_weights_of(env_id, rollouts[0].components),
        stamps=dict(first.mapping("versions") or summary.mapping("versions")),
        rollouts=rollouts,
    )


def _eval_rollout(r: Fields, config: dict[str, Any]) -> Rollout:
    split = r.label("split")
    return Rollout(
        task_id=str(r.label("task_id")),
        rollout=r.integer("rollout", 0) or 0,
        reward=r.number("reward", 0.0) or 0.0,
        components=r.numbers("components"),
        seed=r.integer("seed", None, minimum=-(1 << 63)),
        ref=r.text("task_ref"),
        split=split,
        status=r.text("status", "ok") or "ok",
        metrics=r.mapping("metrics"),
        stop=r.text("stop"),
        turns=r.integer("turns"),
        error=r.text("error"),
        messages=messages_of(r),
        attrs=attributes_of(config, r.mapping("task") or {"split": split}),
    )


# --- calibrate --json ---------------------------------------------------------------------------
def _load_calibrate(path: Path, blocks: list[Any]) -> list[Run]:
    runs = runs_from_calibration(blocks, path.stem, str(path))
    if not runs:
        raise RunError(f"{path}: no calibration rows in it")
    return runs


def runs_from_calibration(blocks: list[Any], name: str, source: str = "") -> list[Run]:
    """One run per env block of `calibrate --json` output."""
    runs = []
    for i, block in enumerate(blocks):
        if not isinstance(block, dict) or "rows" not in block:
            continue
        b = Fields(block, f"{source or name}: block {i}")
        rows = [calibration_row(r, f"{b.where}: rows[{n}]") for n, r in enumerate(b.items("rows"))]
        env_id = b.text("env", "?") or "?"
        runs.append(
            Run(
                name=f"{name}:{env_id}",
                source=source or name,
                kind="calibrate",
                env=env_id,
                config={},
                model="calibration",
                weights=_weights_of(env_id, rows[0]["components"] if rows else {}),
                stamps=dict(b.mapping("versions")),
                rows=rows,
            )
        )
    return runs


# --- verifiers traces.jsonl ---------------------------------------------------------------------
def _vf_messages(trace: Fields) -> list[dict[str, Any]]:
    """The chat messages of a trace's nodes (a node without a message is not one)."""
    out = []
    for i, node in enumerate(trace.items("nodes")):
        where = f"{trace.where}: nodes[{i}]"
        message = Fields(node, where).obj.get("message")
        if message is not None:
            out.append(chat_message(message, f"{where}.message"))
    return out


def _vf_rewards(trace: Fields) -> tuple[dict[str, float], dict[str, float]]:
    components, weights = {}, {}
    for key, value in trace.mapping("rewards").items():
        r = Fields(value, f"{trace.where}: rewards.{key}")
        components[key] = r.number("score", 0.0) or 0.0
        weights[key] = r.number("weight", 0.0) or 0.0
    return components, weights


def _load_traces(path: Path, blocks: list[tuple[int, Any]]) -> Run:
    rollouts: list[Rollout] = []
    env_id, model, config = "?", "?", {}
    weights: dict[str, float] = {}
    counts: dict[str, int] = {}
    for line, obj in blocks:
        episode = Fields(obj, f"{path}:{line}")
        for i, raw in enumerate(episode.items("traces")):
            trace = Fields(raw, f"{episode.where}: traces[{i}]")
            data = trace.fields("task").fields("data")
            env_id = data.text("env_id") or episode.fields("env").text("id") or env_id
            config = dict(data.mapping("env_config") or config)
            model = trace.fields("agent").fields("config").text("model") or model
            components, weights = _vf_rewards(trace)
            task_id = data.label("id") or f"task-{len(rollouts)}"
            n = counts.get(task_id, 0)
            counts[task_id] = n + 1
            messages = _vf_messages(trace)
            errors = trace.items("errors")
            rollouts.append(
                Rollout(
                    task_id=task_id,
                    rollout=n,
                    reward=round(sum(components[k] * weights[k] for k in components), 6),
                    components=components,
                    seed=data.integer("seed", None, minimum=-(1 << 63)),
                    ref=data.text("ref"),
                    split=data.label("split"),
                    status="ok" if trace.flag("ok", True) and not errors else "failed",
                    metrics=trace.mapping("metrics"),
                    stop=trace.text("stop_condition"),
                    turns=sum(1 for m in messages if m.get("role") == "assistant"),
                    error="; ".join(str(e) for e in errors)[:2000] or None,
                    messages=messages,
                    attrs=attributes_of(config, data.obj),
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
