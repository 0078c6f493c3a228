"""Write (or check) the thin per-env distributions under environments/<id>/ from the registry.

Each registered env with a verifiers module gets a distribution named after its id, holding the
one top-level module verifiers loads it by (`vf-eval dirty-integration` imports
`dirty_integration`) and depending on this package with the verifiers extra, as the
Environments Hub expects: one distribution per environment.

    python scripts/env_packages.py          # write environments/
    python scripts/env_packages.py --check  # exit 1 if environments/ is out of date
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "environments"
MODULE_LINE = (
    '__all__ = __import__("datagauntlet.frontdoors.vf").frontdoors.vf.export(__name__, globals())\n'
)


def expected_files() -> dict[Path, str]:
    sys.path.insert(0, str(ROOT / "src"))
    from datagauntlet.core import registry
    from datagauntlet.core.version import PACKAGE_VERSION

    files: dict[Path, str] = {}
    for reg in sorted(registry.registrations().values(), key=lambda r: r.id):
        if not reg.has_verifiers_module:
            continue
        folder = OUT / reg.id
        files[folder / "pyproject.toml"] = f"""\
# Written by scripts/env_packages.py from the env's registration; do not edit by hand.
[build-system]
requires = ["setuptools>=77"]
build-backend = "setuptools.build_meta"

[project]
name = "{reg.id}"
version = "{PACKAGE_VERSION}"
description = "datagauntlet {reg.id}: {reg.summary}"
readme = "README.md"
requires-python = ">=3.11"
license = "MIT"
dependencies = ["datagauntlet[verifiers]=={PACKAGE_VERSION}"]

[tool.setuptools]
py-modules = ["{reg.module_name}"]
"""
        files[folder / f"{reg.module_name}.py"] = MODULE_LINE
        files[folder / "README.md"] = f"""\
# {reg.id}

The `{reg.id}` environment of [datagauntlet](../../README.md), packaged alone for the
Environments Hub: {reg.summary}.

```bash
pip install {reg.id}
vf-eval {reg.id} -n 5 -m MODEL --client.base-url URL
```

Everything lives in the `datagauntlet` package; this distribution only holds the module
`{reg.module_name}` that verifiers loads the env by. Docs: `docs/envs/{reg.id}.md`.
"""
    return files


def main() -> int:
    files = expected_files()
    stale = [p for p, text in files.items() if not p.is_file() or p.read_text() != text]
    extra = (
        [
            p
            for p in OUT.glob("*/*")
            if p.is_file() and p not in files and p.suffix in (".py", ".toml", ".md")
        ]
        if OUT.is_dir()
        else []
    )
    if "--check" in sys.argv:
        for p in stale + extra:
            print(f"out of date: {p.relative_to(ROOT)} (run python scripts/env_packages.py)")
        return 1 if stale or extra else 0
    for p, text in files.items():
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    for p in extra:
        p.unlink()
    print(f"wrote {len(files)} files under {OUT.relative_to(ROOT)}/")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
