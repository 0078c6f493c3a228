"""The difficulty curve published in docs/envs/event-recon.md is the code's output.

The whole table (240 episodes) is recomputed when DATAGAUNTLET_GATES=1 (`make gates`); the
default suite recomputes one row on one tier, which any change to the policies moves.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from datagauntlet.envs.event_recon.solver.curve import curve, main, markdown

DOC = Path(__file__).resolve().parents[2] / "docs" / "envs" / "event-recon.md"


def published() -> str:
    text = DOC.read_text()
    m = re.search(r"<!-- curve:start -->\n(.*?)\n<!-- curve:end -->", text, re.S)
    assert m, "docs/envs/event-recon.md has no curve table"
    return m.group(1).strip()


def published_cells() -> dict[tuple[int, int], float]:
    lines = published().splitlines()
    tiers = [int(c.strip()[1:]) for c in lines[0].strip("|").split("|")[1:-1]]
    out = {}
    for line in lines[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        for tier, value in zip(tiers, cells[1:-1], strict=True):
            out[(int(cells[0]), tier)] = float(value)
    return out


def test_one_row_of_the_published_curve_is_measured_again() -> None:
    cells = curve(ks=(12,), tiers=(1,))
    assert [(c.k, c.tier) for c in cells] == [(12, 1)]
    assert cells[0].mean_reward == published_cells()[(12, 1)]


@pytest.mark.skipif(os.environ.get("DATAGAUNTLET_GATES") != "1", reason="full sweep: make gates")
def test_the_published_curve_is_the_measured_one() -> None:
    cells = curve(workers=2)
    assert markdown(cells) == published()


def test_the_published_curve_rises_to_the_reference() -> None:
    got = published_cells()
    tiers = sorted({t for _, t in got})
    for t in tiers:
        assert got[(14, t)] == 1.0  # the complete contract solves every task
        assert got[(0, t)] < 0.5
    assert "| 0 |" in published() and published().splitlines()[2].endswith("| 0/30 |")


def test_the_curve_command_refuses_bad_arguments(capsys) -> None:
    assert main(["--every", "0"]) == 2
    assert "must be >= 1" in capsys.readouterr().err


def test_the_page_quotes_its_published_tables() -> None:
    """The summary's figures are the page's tables' (which the full sweep holds to the code)."""
    docs = DOC.read_text()

    def quoted(tag: str) -> str:
        m = re.search(rf"<!-- {tag} -->(.*?)<!-- /{tag} -->", docs)
        assert m, tag
        return m.group(1)

    k12 = next(line for line in published().splitlines() if line.startswith("| 12 |"))
    assert k12.rstrip(" |").endswith(quoted("curve-k12"))
    row = next(line for line in docs.splitlines() if "(`workspace_only`)" in line)
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1] == quoted("attack-solved")
    assert cells[3] == quoted("attack-ledger")
