"""A small hand-made truth for event-recon's grader rule tests: four partners, two of them
broken, the ledger that repairs them, the report that names both defects."""

from __future__ import annotations

from datagauntlet.envs.event_recon.grading.grader import Outcome, Truth, grade

P = ("p1", "p2", "p3", "p4")


def truth(manifest: dict[tuple[str, str], set[str]] | None = None) -> Truth:
    manifest = manifest or {
        ("duplicate_delivery", "p1"): {"e1", "e2"},
        ("schema_drift", "p2"): {"e9"},
    }
    correct = {"p1": {"2026-01": 100}, "p2": {"2026-01": 50}, "p3": {"2026-02": 7}, "p4": {}}
    shipped = {"p1": {"2026-01": 130}, "p2": {"2026-01": 0}, "p3": {"2026-02": 7}, "p4": {}}
    return Truth(
        families=("duplicate_delivery", "schema_drift", "timezone_boundary"),
        partners=P,
        manifest=frozenset(manifest),
        evidence={k: frozenset(v) for k, v in manifest.items()},
        correct=correct,
        shipped=shipped,
        period_column="period",
        amount_column="amount",
    )


def outcome(projection: dict[str, dict[str, int]] | None, **kw: object) -> Outcome:
    base: dict[str, object] = {
        "status": "ok",
        "changed_partners": frozenset({"p1", "p2"}),
        "payouts_changed": False,
        "db_changed": True,
        "script_bytes": 10,
        "script_lines": 1,
    }
    base.update(kw)
    return Outcome(projection=projection, **base)  # type: ignore[arg-type]


REPAIRED = {"p1": {"2026-01": 100}, "p2": {"2026-01": 50}, "p3": {"2026-02": 7}, "p4": {}}


PERFECT = [
    {"family": "duplicate_delivery", "partner_id": "p1", "event_id": "e1"},
    {"family": "schema_drift", "partner_id": "p2", "event_id": "e9"},
]


def report(findings: list[dict[str, str]]) -> dict[str, object]:
    return {"findings": findings, "script_path": "fix.py"}


def values(t: Truth, findings: list[dict[str, str]], o: Outcome | None) -> dict[str, float]:
    s = grade(t, report(findings) if o is not None else None, o, [])
    return {k: c["value"] for k, c in s.components.items()}
