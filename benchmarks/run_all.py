"""Run every benchmark script in this folder and print its figures (`make bench`)."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

here = Path(__file__).resolve().parent
for script in sorted(here.glob("*.py")):
    if script.name == Path(__file__).name:
        continue
    print(f"== {script.stem} ==", flush=True)
    sys.argv = [str(script)]
    runpy.run_path(str(script), run_name="__main__")
