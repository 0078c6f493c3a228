"""Results several test files need, computed once per run and shared across xdist workers.

Some files each spent 20-45 s building the same thing (all 120 public event-recon worlds, the
dataclean calibration rows, bad-batch-gate's played splits). `shared_result(name, build)`
builds it once: the first worker to ask computes it under a file lock and pickles it under the
pytest cache dir; every later asker (other worker, later file) loads it. The file's name holds a
digest of the code that made it (every file of the datagauntlet and held-out packages, the
Python and SQLite versions, the DATAGAUNTLET_* variables), so any change to them misses the old
file and builds anew: a result cannot go stale. Without the cache plugin (`-p
no:cacheprovider`, as mutmut runs) it just builds, in this process.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import os
import pickle
import sqlite3
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

T = TypeVar("T")
_DIR = "datagauntlet-shared"
_memo: dict[str, Any] = {}


def _package_dirs() -> list[Path]:
    import datagauntlet

    dirs = [Path(datagauntlet.__file__).parent]
    with contextlib.suppress(ImportError):
        import datagauntlet_heldout  # type: ignore[import-not-found]

        dirs.append(Path(datagauntlet_heldout.__file__).parent)
    return dirs


@functools.cache
def code_digest() -> str:
    """A digest of everything a shared result may depend on besides its name."""
    h = hashlib.sha256(f"{sys.version}\0{sqlite3.sqlite_version}\0".encode())
    for key in sorted(k for k in os.environ if k.startswith("DATAGAUNTLET_")):
        h.update(f"{key}={os.environ[key]}\0".encode())
    for root in _package_dirs():
        for path in sorted(root.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                h.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:20]


def computed_once(cache_dir: Path | None, name: str, build: Callable[[], T]) -> T:
    """`build()`'s result, built at most once per code digest across processes sharing
    `cache_dir` (None: once in this process)."""
    key = f"{name}-{code_digest()}"
    if key in _memo:
        return _memo[key]  # type: ignore[no-any-return]
    if cache_dir is None:
        _memo[key] = build()
        return _memo[key]  # type: ignore[no-any-return]
    target = cache_dir / f"{key}.pickle"
    with open(cache_dir / f"{name}.lock", "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a second asker waits, then loads
        try:
            value = pickle.loads(target.read_bytes())
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
            value = build()
            for old in cache_dir.glob(f"{name}-*.pickle"):
                old.unlink(missing_ok=True)
            fd, tmp = tempfile.mkstemp(dir=cache_dir, suffix=".tmp")
            with os.fdopen(fd, "wb") as out:
                pickle.dump(value, out, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, target)
    _memo[key] = value
    return value  # type: ignore[no-any-return]


@pytest.fixture(scope="session")
def shared_result(request: pytest.FixtureRequest) -> Callable[[str, Callable[[], Any]], Any]:
    """`shared_result(name, build)`: see the module's docstring."""
    cache = getattr(request.config, "cache", None)
    cache_dir = cache.mkdir(_DIR) if cache is not None else None

    def get(name: str, build: Callable[[], T]) -> T:
        return computed_once(cache_dir, name, build)

    return get
