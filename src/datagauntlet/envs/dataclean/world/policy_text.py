"""The per-task policy text: what each column should hold and how this batch was exported.

It is the agent's whole specification. It documents the standing conventions, the two aliases
used only by this batch and whether its dates are written month first or day first; it never
says which cells are wrong.
"""

from __future__ import annotations

from collections.abc import Iterable

from datagauntlet.envs.dataclean.world import families as fam
from datagauntlet.envs.dataclean.world.families import Column, Family


def quoted(values: Iterable[str]) -> str:
    return ", ".join(f'"{v}"' for v in values)


def describe(col: Column) -> str:
    kind = col.kind
    if kind == fam.KEY:
        return "primary key; identifies the record. Protected: never edit."
    if kind == fam.REF:
        return "customer reference. Protected: never edit."
    if kind == fam.NOTES:
        return "free text written by staff. Protected: never edit."
    if kind == fam.NAME:
        return (
            f"{col.label}, written as given (accents and other non-ASCII letters included); "
            "keep spelling and capitalisation exactly, only trim surrounding whitespace."
        )
    if kind == fam.EMAIL:
        return "e-mail address, all lower-case; null when missing."
    if kind == fam.PHONE:
        return "US phone number written like 415-555-0132; null when missing."
    if kind == fam.CATEGORY:
        return f"one of {', '.join(col.categories)} (lower-case)."
    if kind == fam.DATE:
        return "calendar date in ISO 8601 form YYYY-MM-DD."
    if kind == fam.AMOUNT:
        return (
            "money as a plain decimal with exactly two places (1234.50, -45.00, 0.00); "
            "zero and negative amounts are real and must be kept."
        )
    if kind == fam.QUANTITY:
        return "whole number (12, 0, -3); zero and negative counts are real and must be kept."
    if kind == fam.CODE:
        return f"{col.label}, in upper case."
    if kind in (fam.DIGITS, fam.REFERENCE):
        return (
            f"{col.label}, written exactly as given, leading zeros included; not a number to "
            "reformat: only trim surrounding whitespace."
        )
    if kind == fam.PRINTED:
        return (
            f"{col.label}, exactly as printed, in the printer's own order; not a date to "
            "convert: only trim surrounding whitespace."
        )
    if kind == fam.COUNTRY:
        return (
            "two-letter ISO 3166 country code, in upper case; NA is Namibia, a real country "
            "and never a missing value."
        )
    raise ValueError(f"unknown column kind {kind!r}")


def render_policy(
    family: Family, aliases: dict[str, dict[str, str]], date_order: str, n_rows: int
) -> str:
    nullable = [c.name for c in family.columns if c.missing_rate > 0]
    lines = [
        f"Cleaning policy for this {family.title} ({n_rows} rows).",
        "",
        "Target format of each column:",
        *(f"- {c.name}: {describe(c)}" for c in family.columns),
        "",
        "How this export was written:",
        "- Any cell may carry stray whitespace before or after its value.",
        f"- Missing values are written as any of: {quoted(fam.MISSING_TOKENS)}; only "
        f"{', '.join(nullable)} may be missing.",
    ]
    for col in family.category_columns:
        standing = "; ".join(f'"{a}" means {t}' for a, t in col.standing_aliases.items())
        own = "; ".join(f'"{a}" means {t}' for a, t in aliases.get(col.name, {}).items())
        lines.append(f"- Standing aliases for {col.name}: {standing}.")
        lines.append(f"- Aliases used only by this batch for {col.name}: {own}.")
    if date_order == "US":
        lines.append(
            "- Dates in this batch are written month first (US: MM/DD/YYYY; also M/D/YYYY, "
            "MM-DD-YYYY and MM.DD.YYYY); some are already ISO."
        )
    else:
        lines.append(
            "- Dates in this batch are written day first (EU: DD/MM/YYYY; also D/M/YYYY, "
            "DD-MM-YYYY and DD.MM.YYYY); some are already ISO."
        )
    lines += [
        "- Some rows were exported twice: record_id identifies a record; keep its first copy.",
        "- Aliases and missing-value markers are whole cell values, matched exactly after "
        "trimming.",
    ]
    return "\n".join(lines)
