"""Where `datagauntlet eval`'s CPU goes at 256 rollouts at once against the scripted model.

    .venv/bin/python benchmarks/profile_eval.py [--rollouts 256] [--concurrency 256]

Starts `mock-model` in its own process, runs the eval CLI in this process under cProfile with
a CPU-time clock (so waiting for a core on a busy machine is not counted), and prints each
layer's share of the eval process's own CPU: the openai SDK, httpx's client, the HTTP/1.1
transport, the agent loop and the env's episodes, JSON, the event loop, start-up. The shares
are of profiled time (cProfile slows Python code more than C code), so read them as where to
look, not as exact costs. docs/eval-speed.md quotes one run.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import subprocess
import sys
import tempfile
import time

# (layer, substrings of a function's file path), first match wins
LAYERS = (
    ("openai SDK (request options, headers, retries, response)", ("/openai/",)),
    ("httpx client (Request/Response, headers, URLs, cookies)", ("/httpx/",)),
    ("HTTP/1.1 transport (frontdoors/http11.py)", ("frontdoors/http11.py",)),
    ("agent loop + model glue (loop, models, evaluate, live)",
     ("frontdoors/loop.py", "frontdoors/models.py", "frontdoors/evaluate.py",
      "frontdoors/live.py", "frontdoors/chat.py")),
    ("env episodes: tools, log, scoring (core/, envs/)",
     ("datagauntlet/core/", "datagauntlet/envs/", "datagauntlet/kits/")),
    ("pydantic (inside the SDK)", ("/pydantic", "pydantic_core")),
    ("json encode/decode", ("/json/",)),
    ("asyncio event loop", ("/asyncio/",)),
    ("imports and start-up", ("<frozen importlib", "importlib")),
)  # fmt: skip


def layer_of(path: str) -> str:
    for name, needles in LAYERS:
        if any(n in path for n in needles):
            return name
    return "other (stdlib, rich, the progress bar)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="dirty-integration")
    parser.add_argument("--rollouts", type=int, default=256)
    parser.add_argument("--concurrency", type=int, default=256)
    args = parser.parse_args()
    mock = subprocess.Popen(
        [sys.executable, "-m", "datagauntlet.cli.main", "mock-model", "--env", args.env,
         "--port", "0"], stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert mock.stdout is not None
    url = mock.stdout.readline().rsplit(" at ", 1)[1].strip()
    from datagauntlet.cli.main import main as cli

    profile = cProfile.Profile(time.process_time)
    try:
        with tempfile.TemporaryDirectory() as out:
            argv = ["eval", "--env", args.env, "-n", str(args.rollouts), "--concurrency",
                    str(args.concurrency), "--model", "careful", "--base-url", url, "--out", out,
                    "--json"]  # fmt: skip
            profile.enable()
            cli(argv)
            profile.disable()
    finally:
        mock.terminate()
        mock.wait(timeout=10)
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    shares: dict[str, float] = {}
    other: dict[str, float] = {}
    for (path, _, func), (_, _, own, _, callers) in stats.items():
        if path == "~" and callers:  # a C builtin: charged to the layer of its main caller
            path = max(callers.items(), key=lambda kv: kv[1][2])[0][0]
        key = layer_of(path if path != "~" else func)
        shares[key] = shares.get(key, 0.0) + own
        if key.startswith("other"):
            where = f"{path}:{func}"
            other[where] = other.get(where, 0.0) + own
    total = sum(shares.values())
    print(f"\neval process, profiled CPU by layer ({total:.1f} s profiled):", file=sys.stderr)
    for name, seconds in sorted(shares.items(), key=lambda kv: -kv[1]):
        print(f"  {100 * seconds / total:5.1f}%  {name}", file=sys.stderr)
    print("largest in other:", file=sys.stderr)
    for where, seconds in sorted(other.items(), key=lambda kv: -kv[1])[:8]:
        print(f"  {100 * seconds / total:5.1f}%  {where[-90:]}", file=sys.stderr)


if __name__ == "__main__":
    main()
