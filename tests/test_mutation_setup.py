"""`make mutants`: the per-file test selection and the report's arithmetic.

The selection must name real tests for every target file (a typo would silently test a file
with nothing and count its mutants as survivors), and the report must count a mutant no test
reached as a survivor, never as killed.
"""

from __future__ import annotations

import importlib.util
import tomllib
from fnmatch import fnmatch
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
MUTMUT = CONFIG["tool"]["mutmut"]
SELECTION = CONFIG["tool"]["datagauntlet"]["mutation"]["tests"]


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


hook = _load(ROOT / "tests" / "conftest.py", "mutation_selection_hook")
report = _load(ROOT / "scripts" / "mutation_report.py", "mutation_report")


@pytest.mark.parametrize("target", MUTMUT["only_mutate"])
def test_every_target_file_exists_and_has_tests_chosen(target: str) -> None:
    assert (ROOT / target).is_file(), target
    chosen = hook.tests_for_source(target, SELECTION)
    assert chosen and not chosen[0].startswith("!"), f"{target} has no tests chosen"
    for prefix in chosen:
        path, _, name = prefix.lstrip("!").partition("::")
        assert (ROOT / path).exists(), f"{target}: {path} does not exist"
        if name:  # a test left out or chosen by name must exist by that name
            assert "def " + name.split("[")[0] in (ROOT / path).read_text(), (target, prefix)


def test_every_chosen_test_is_in_the_global_selection() -> None:
    # mutmut only knows which tests reach a function from the tests it ran in its stats phase.
    args = MUTMUT["pytest_add_cli_args_test_selection"]
    selected = [p.rstrip("/") for p in args if not p.startswith("-")]
    for target, chosen in SELECTION.items():
        for prefix in chosen:
            if not prefix.startswith("!"):
                assert any(prefix.rstrip("/").startswith(s) for s in selected), (target, prefix)


def test_tests_left_out_by_name_are_left_out(tmp_path: Path) -> None:
    class Item:
        def __init__(self, nodeid: str) -> None:
            self.nodeid = nodeid

    class Hook:
        def pytest_deselected(self, items: list[Item]) -> None:
            self.dropped = [i.nodeid for i in items]

    (tmp_path / "pyproject.toml").write_text(
        '[tool.datagauntlet.mutation.tests]\n"src/datagauntlet/core/*" = '
        '["tests/core/a.py", "tests/core/b.py", "!tests/core/b.py::test_slow"]\n'
    )
    config = type("Config", (), {"rootpath": tmp_path, "hook": Hook()})()
    items = [Item(n) for n in ("tests/core/a.py::t", "tests/core/b.py::test_slow[1]",
                               "tests/core/b.py::test_quick", "tests/other.py::t")]  # fmt: skip
    mutant = "datagauntlet.core.score.x_check_weights__mutmut_1"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MUTANT_UNDER_TEST", mutant)
        mp.setattr(hook, "_cap_cpu", lambda seconds: None)
        hook.pytest_collection_modifyitems(config, items)
        assert [i.nodeid for i in items] == ["tests/core/a.py::t", "tests/core/b.py::test_quick"]
        assert config.hook.dropped == ["tests/core/b.py::test_slow[1]", "tests/other.py::t"]
        mp.setenv("MUTANT_UNDER_TEST", "stats")  # not a mutant: every test runs
        again = [Item("tests/other.py::t")]
        hook.pytest_collection_modifyitems(config, again)
        assert len(again) == 1


def test_a_mutant_name_maps_to_its_source_file() -> None:
    assert (
        hook._module_path("datagauntlet.core.episode.xǁEpisodeǁcall__mutmut_3")
        == "src/datagauntlet/core/episode.py"
    )
    assert (
        hook._module_path("datagauntlet.core.seeding.x_task_seed__mutmut_12")
        == "src/datagauntlet/core/seeding.py"
    )


def test_the_first_matching_pattern_wins() -> None:
    engine = hook.tests_for_source("src/datagauntlet/envs/dataclean/tool/engine.py", SELECTION)
    grader = hook.tests_for_source("src/datagauntlet/envs/dataclean/grading/grader.py", SELECTION)
    assert "tests/dataclean/test_dataclean_engine.py" in engine
    assert engine != grader
    assert fnmatch(
        "src/datagauntlet/envs/dataclean/tool/engine.py", "src/datagauntlet/envs/dataclean/*"
    )
    assert hook.tests_for_source("src/datagauntlet/frontdoors/serve.py", SELECTION) is None


def test_the_report_counts_untested_and_unrun_mutants_as_survivors() -> None:
    results = {
        "datagauntlet.core.score.x_check_weights__mutmut_1": "killed",
        "datagauntlet.core.score.x_check_weights__mutmut_2": "timeout",
        "datagauntlet.core.score.x_check_weights__mutmut_3": "survived",
        "datagauntlet.core.score.x_check_weights__mutmut_4": "no tests",
        "datagauntlet.core.score.x_check_weights__mutmut_5": "not checked",
        "datagauntlet.core.seeding.x_unit__mutmut_1": "survived",
    }
    equivalent = {"datagauntlet.core.seeding.x_unit__mutmut_1": "a reason", "gone": "stale"}
    summary = report.summarise(results, equivalent)
    assert (summary["killed"], summary["total"], summary["equivalent"]) == (2, 5, 1)
    assert summary["kill_rate"] == pytest.approx(0.4)
    assert [name for name, _ in summary["survivors"]] == [
        f"datagauntlet.core.score.x_check_weights__mutmut_{i}" for i in (3, 4, 5)
    ]
    assert summary["stale_equivalent"] == ["gone"]
    text = report.render(summary)
    assert "40.0%" in text and "x_check_weights__mutmut_4  [no tests]" in text
    assert "of the 4 judged so far: 50.0% killed" in text  # one not run yet


def test_a_survivor_left_alive_is_shown_with_its_reason_and_still_counted(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    why = tmp_path / "surviving.txt"
    why.write_text("# a comment line\ndatagauntlet.core.score.x_f__mutmut_1  # a race\n")
    monkeypatch.setattr(report, "SURVIVING", why)
    results = {
        "datagauntlet.core.score.x_f__mutmut_1": "survived",
        "datagauntlet.core.score.x_f__mutmut_2": "killed",
    }
    summary = report.summarise(results, {})
    assert summary["kill_rate"] == pytest.approx(0.5)  # still against the rate
    assert "x_f__mutmut_1  [survived]  # a race" in report.render(summary)
    markdown = report.survivors_markdown(summary, {"datagauntlet.core.score.x_g__mutmut_9": "same"})
    assert "| `x_f__mutmut_1` |" in markdown and "| survived | a race |" in markdown
    assert "| equivalent | same |" in markdown


def test_the_stats_pass_files_a_test_only_under_the_functions_whose_file_chooses_it() -> None:
    # mutmut then hands each mutant only its file's chosen tests (and times them alone).
    selection = {
        "src/datagauntlet/core/score.py": ["tests/core/a.py", "!tests/core/a.py::test_slow"],
        "src/datagauntlet/core/*": ["tests/core/b.py"],
    }
    score, seeding = "datagauntlet.core.score.x_check_weights", "datagauntlet.core.seeding.x_unit"
    elsewhere = "datagauntlet.frontdoors.serve.x_main"  # no pattern: mutmut's record is kept
    cases = {
        "tests/core/a.py::test_quick": {score, elsewhere},
        "tests/core/a.py::test_slow[1]": {elsewhere},
        "tests/core/b.py::test_x": {seeding, elsewhere},
        "tests/other.py::test_y": {elsewhere},
    }
    for nodeid, kept in cases.items():
        hits = {score, seeding, elsewhere}
        hook.drop_unchosen_hits(nodeid, hits, selection)
        assert hits == kept, nodeid


def test_the_stats_hook_edits_the_set_mutmut_files_tests_from() -> None:
    # The hook reaches into mutmut's state; if mutmut moves it, this fails instead of the
    # narrowing silently stopping (the per-mutant deselection would still hold).
    from mutmut.state import state

    assert isinstance(state()._stats, set)


def test_cpu_per_mutant_is_summed_per_module_and_a_rerun_replaces_its_mutant(
    tmp_path: Path,
) -> None:
    log = tmp_path / "cpu.jsonl"
    log.write_text(
        '{"mutant": "datagauntlet.core.score.x_f__mutmut_1", "cpu_s": 1.0}\n'
        '{"mutant": "datagauntlet.core.score.x_f__mutmut_2", "cpu_s": 3.0}\n'
        "not json\n"
        '{"mutant": "datagauntlet.core.score.x_f__mutmut_1", "cpu_s": 2.0}\n'
        '{"mutant": "datagauntlet.core.seeding.x_g__mutmut_1", "cpu_s": 0.5}\n'
    )
    by_module = report.cpu_by_module(log)
    assert by_module["datagauntlet.core.score"] == {"mutants": 2, "mean_s": 2.5, "sum_s": 5.0}
    assert by_module["datagauntlet.core.seeding"]["mutants"] == 1
    assert report.cpu_by_module(tmp_path / "absent.jsonl") == {}


def test_mutmut_runs_in_a_pid_namespace_of_its_own_where_it_can(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import subprocess
    import sys

    argv = [sys.executable, "-c", "pass"]
    monkeypatch.setattr(report.os, "geteuid", lambda: 1000)
    assert report.isolated(argv) == argv  # not root: as it is (with a warning)
    monkeypatch.undo()
    wrapped = report.isolated(argv)
    if wrapped == argv:
        pytest.skip("no PID namespace here (needs root and unshare)")
    assert wrapped[: len(report.ISOLATION)] == report.ISOLATION
    # inside, the command sees only its own processes, and its exit code comes back out
    probe = "import os, sys; sys.exit(sum(n.isdigit() for n in os.listdir('/proc')))"
    assert subprocess.call(report.isolated([sys.executable, "-c", probe])) == 2  # init + itself


def test_a_sandbox_runner_mutant_s_tests_run_as_the_init_of_their_own_pid_namespace() -> None:
    # A mutated process sweep (as root) then sees only its own tests' processes: it can kill
    # neither mutmut nor another mutant's tests, and its verdict comes back as it ended.
    import subprocess
    import sys

    assert "datagauntlet.kits.sandbox.sweeps.x_pids_of__mutmut_6".startswith(hook.OWN_NAMESPACE)
    conftest = str(ROOT / "tests" / "conftest.py")
    probe = (
        "import importlib.util, os, sys\n"
        f"spec = importlib.util.spec_from_file_location('hook', {conftest!r})\n"
        "hook = importlib.util.module_from_spec(spec); spec.loader.exec_module(hook)\n"
        "if not hook._in_own_pid_namespace():\n"
        "    sys.exit(99)\n"
        "seen = [n for n in os.listdir('/proc') if n.isdigit()]\n"
        "print(os.getpid(), len(seen), flush=True)\n"
        "os._exit(5)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    if done.returncode == 99:
        pytest.skip("no PID namespace here (needs root)")
    assert (done.returncode, done.stdout.split()) == (5, ["1", "1"])  # pid 1, alone in /proc
    killed = subprocess.run(
        [
            sys.executable,
            "-c",
            probe.replace("os._exit(5)", "os.kill(os.getpid(), 9); os._exit(0)"),
        ],
        capture_output=True,
    )
    # pid 1 ignores a SIGKILL from inside its namespace: it ends by its own os._exit instead
    assert killed.returncode == 0
