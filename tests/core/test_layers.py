"""Dependencies point down: core imports only core, kits only core, envs no door and no CLI."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "datagauntlet"

# layer -> the datagauntlet sub-packages it must never import
FORBIDDEN = {
    "core": ("envs", "frontdoors", "cli", "kits"),
    "kits": ("envs", "frontdoors", "cli"),
    "envs": ("frontdoors", "cli"),
}


def imported_modules(path: Path, root: Path) -> list[tuple[int, str]]:
    """Every absolute module an import statement in `path` names (lazy imports included)."""
    tree = ast.parse(path.read_text(), str(path))
    package = ".".join(path.relative_to(root.parent).with_suffix("").parts[:-1])
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against this file's package
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            out.append((node.lineno, module))
            out += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
    return out


def violations(layer: str, root: Path = PACKAGE) -> list[str]:
    found = []
    for path in sorted((root / layer).rglob("*.py")):
        for line, module in imported_modules(path, root):
            parts = module.split(".")
            if parts[0] == "datagauntlet" and len(parts) > 1 and parts[1] in FORBIDDEN[layer]:
                found.append(f"{path.relative_to(root)}:{line} imports {module}")
    return found


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_no_import_points_up(layer: str) -> None:
    assert violations(layer) == []


def test_the_scan_sees_a_violation(tmp_path: Path) -> None:
    root = tmp_path / "datagauntlet"
    (root / "envs").mkdir(parents=True)
    source = "def f():\n    from datagauntlet.frontdoors import live\n    from ..cli import main\n"
    (root / "envs" / "_layer_probe.py").write_text(source)
    found = violations("envs", root)
    assert found == [
        "envs/_layer_probe.py:2 imports datagauntlet.frontdoors",
        "envs/_layer_probe.py:2 imports datagauntlet.frontdoors.live",
        "envs/_layer_probe.py:3 imports datagauntlet.cli",
        "envs/_layer_probe.py:3 imports datagauntlet.cli.main",
    ]
