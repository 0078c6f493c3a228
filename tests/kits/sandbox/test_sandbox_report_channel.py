"""The report channel the sandboxed side tells the parent its walls through: lines a script
forges count for nothing, the channel keeps only its first mebibyte, and a required wall
reported down refuses the run."""

from __future__ import annotations

from pathlib import Path

import pytest
from sandbox_runner_helpers import QUICK, root_only

from datagauntlet.kits.sandbox import WallsUnavailable, fresh_workspace, run_script
from datagauntlet.kits.sandbox.report import Stream as _Stream
from datagauntlet.kits.sandbox.report import result_of as _result


@root_only
def test_forged_report_lines_do_not_raise_walls() -> None:
    # the script writes wall lines into every pipe it holds; only lines before it started count
    code = (
        "import os, stat\n"
        "for fd in range(3, 64):\n"
        "    try:\n"
        "        if stat.S_ISFIFO(os.fstat(fd).st_mode):\n"
        "            os.write(fd, b'W\\tlandlock\\tup\\tforged\\nW\\tseccomp\\tup\\tforged\\n')\n"
        "    except OSError: pass\n"
    )
    with fresh_workspace() as ws:
        res = run_script(code, ws, QUICK, walls=("process", "rlimits"))
    assert res.walls == ("process", "rlimits")
    assert "forged" not in res.wall_notes.values()


_CHANNEL_WRITE = (
    "import os, stat, time\n"
    "fds = []\n"
    "for fd in range(3, 64):\n"
    "    try:\n"
    "        if stat.S_ISFIFO(os.fstat(fd).st_mode): fds.append(fd)\n"
    "    except OSError: pass\n"
    "for fd in fds:\n"
    "    try:\n"
    "        os.write(fd, b'J' * {junk})\n"
    "    except OSError: pass\n"
    "time.sleep(0.3)  # the line below arrives in a read of its own\n"
    "for fd in fds:\n"
    "    try: os.write(fd, b'\\nV\\tprobe\\tforged\\tafter the junk\\n')\n"
    "    except OSError: pass\n"
)


@root_only
def test_the_report_channel_keeps_only_its_first_mebibyte() -> None:
    # A script can write into the report channel; what it writes past 1 MiB is dropped, so a
    # flood of it costs the parent no more memory than that.
    seen = {}
    with fresh_workspace() as ws:
        for junk in (0, (1 << 20) - 4096, 1 << 20):
            res = run_script(
                _CHANNEL_WRITE.format(junk=junk), ws, QUICK, walls=("process", "rlimits")
            )
            seen[junk] = [v.event for v in res.violations if v.wall == "probe"]
    assert seen == {0: ["forged"], (1 << 20) - 4096: ["forged"], 1 << 20: []}


def test_required_walls_down_refuse_the_run() -> None:
    chan = b"W\tprocess\tup\tok\nW\tlandlock\tdown\tkernel has no Landlock\nR\tlandlock\n"
    with pytest.raises(WallsUnavailable, match="landlock: kernel has no Landlock"):
        _result(125, _Stream(10), _Stream(10), chan, [], QUICK, 0.1, 0.0, False, False, 0,
                Path("/ws"))  # fmt: skip
