"""The interpreter the sandbox runs: a root-owned, world-readable copy of this Python's stdlib.

The child drops to an unprivileged user, and the interpreter's own tree may sit under a
directory only root can enter (`/root` is 0700 on our machines). So the sandbox runs a copy:
the interpreter binary and its stdlib, without site-packages, tests or GUI modules, under a
directory every user can read but only its owner can write. The copy is built once per
interpreter and reused; it also holds the compiled launcher and the digests of the stdlib's
own bytecode (the audit hook lets `marshal` load those and nothing else).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

from datagauntlet.kits.sandbox.child import launcher_source

LAYOUT = 4  # bump when the copy's shape changes, so old copies are not reused
SKIP_DIRS = frozenset(
    {"site-packages", "test", "tests", "idle_test", "idlelib", "tkinter", "turtledemo"}
    | {"ensurepip", "lib2to3", "__phello__", "venv", "pydoc_data"}
)
ENV_HOME = "DATAGAUNTLET_SANDBOX_HOME"


@dataclass(frozen=True)
class Runtime:
    root: Path  # the copy: bin/, lib/pythonX.Y/, launcher and manifest
    python: Path  # the copied interpreter binary
    stdlib: Path  # its stdlib directory
    libs: tuple[str, ...]  # shared libraries the stdlib's extension modules load at import
    launcher: Path  # the compiled launcher the child runs
    digests: Path  # blake2b-128 digests of every stdlib code object, concatenated
    scratch: Path  # where fresh workspaces are made (0711: enterable, not listable)


def home() -> Path:
    """Where runtimes live: `$DATAGAUNTLET_SANDBOX_HOME`, else a root-owned system directory."""
    if os.environ.get(ENV_HOME):
        return Path(os.environ[ENV_HOME])
    if os.geteuid() == 0:
        return Path("/var/lib/datagauntlet/sandbox")
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(cache) / "datagauntlet" / "sandbox"


def _base_python() -> tuple[Path, Path]:
    exe = Path(os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable))
    stdlib = Path(sysconfig.get_paths(vars={"base": sys.base_prefix})["stdlib"])
    return exe, stdlib


def _identity(exe: Path, stdlib: Path) -> str:
    h = hashlib.blake2b(digest_size=6)
    for part in (str(LAYOUT), sys.version, str(exe), str(stdlib)):
        h.update(part.encode() + b"\0")
    st = exe.stat()
    h.update(f"{st.st_size}:{st.st_mtime_ns}".encode())
    return f"py{sys.version_info[0]}{sys.version_info[1]}-{h.hexdigest()}"


_cached: Runtime | None = None


def runtime() -> Runtime:
    """The runtime for this interpreter, built on first use (about a second) and then reused."""
    global _cached
    if _cached is not None and _cached.launcher.exists():
        return _cached
    exe, stdlib = _base_python()
    base = home()
    root = base / _identity(exe, stdlib)
    if not (root / "runtime.json").exists():
        _build(base, root, exe, stdlib)
    meta = json.loads((root / "runtime.json").read_text())
    launcher = _ensure_launcher(root)
    scratch = base / "scratch"
    scratch.mkdir(mode=0o711, exist_ok=True)
    os.chmod(scratch, 0o711)
    _cached = Runtime(
        root=root,
        python=root / meta["python"],
        stdlib=root / meta["stdlib"],
        libs=tuple(meta["libs"]),
        launcher=launcher,
        digests=root / "code-digests.bin",
        scratch=scratch,
    )
    return _cached


@contextlib.contextmanager
def _lock(base: Path):
    base.mkdir(parents=True, exist_ok=True, mode=0o755)
    with open(base / ".lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        yield


def _build(base: Path, root: Path, exe: Path, stdlib: Path) -> None:
    with _lock(base):
        if (root / "runtime.json").exists():
            return  # another process built it while we waited
        tmp = root.with_name(root.name + f".tmp{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        rel_std = Path("lib") / stdlib.name
        (tmp / "bin").mkdir(parents=True, mode=0o755)
        shutil.copy2(exe, tmp / "bin" / exe.name)
        shutil.copytree(stdlib, tmp / rel_std, ignore=_ignore, symlinks=False)
        digests = _code_digests(tmp / rel_std)
        (tmp / "code-digests.bin").write_bytes(b"".join(sorted(digests)))
        meta = {
            "python": f"bin/{exe.name}",
            "stdlib": str(rel_std),
            "libs": _shared_libs(tmp / rel_std / "lib-dynload"),
            "source": str(exe),
        }
        (tmp / "runtime.json").write_text(json.dumps(meta, indent=1))
        _world_readable(tmp)
        os.rename(tmp, root)


def _ignore(directory: str, names: list[str]) -> set[str]:
    skip = {n for n in names if n in SKIP_DIRS or n.startswith("config-")}
    skip |= {n for n in names if ".opt-" in n and n.endswith(".pyc")}
    # C test helpers and subinterpreters (each of which starts without the audit hook)
    return skip | {n for n in names if n.startswith(("_test", "_xx")) and n.endswith(".so")}


def _world_readable(root: Path) -> None:
    for dirpath, _, filenames in os.walk(root):
        os.chmod(dirpath, 0o755)
        for name in filenames:
            path = os.path.join(dirpath, name)
            mode = os.stat(path).st_mode
            os.chmod(path, 0o755 if mode & 0o111 else 0o644)


def _code_digests(stdlib: Path) -> set[bytes]:
    """Digests of the marshalled code in every stdlib .pyc (the bytes importlib unmarshals)."""
    out = set()
    for pyc in stdlib.rglob("*.pyc"):
        out.add(hashlib.blake2b(pyc.read_bytes()[16:], digest_size=16).digest())
    return out


def _shared_libs(dynload: Path) -> list[str]:
    """The system libraries the extension modules need, resolved, plus the loader's cache."""
    found = {"/etc/ld.so.cache"}
    for so in sorted(dynload.glob("*.so")):
        try:
            out = subprocess.run(
                ["ldd", str(so)], capture_output=True, text=True, timeout=10, check=False
            ).stdout
        except (OSError, subprocess.TimeoutExpired):
            continue
        for line in out.splitlines():
            parts = line.split("=>")
            target = (parts[1] if len(parts) > 1 else parts[0]).strip().split(" (")[0].strip()
            if target.startswith("/"):
                found.add(target)
                found.add(os.path.realpath(target))
    # glibc loads libgcc_s on demand when a thread exits through pthread_exit
    for line in _ldconfig().splitlines():
        if "libgcc_s.so.1" in line and "=>" in line:
            path = line.split("=>")[1].strip()
            found.update({path, os.path.realpath(path)})
    return sorted(p for p in found if os.path.exists(p))


def _ldconfig() -> str:
    for exe in ("/sbin/ldconfig", "/usr/sbin/ldconfig", "ldconfig"):
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            return subprocess.run(
                [exe, "-p"], capture_output=True, text=True, timeout=10, check=False
            ).stdout
    return ""


def _ensure_launcher(root: Path) -> Path:
    """The launcher compiled to a .pyc the child runs directly (no parse at each start)."""
    source = launcher_source()
    tag = hashlib.blake2b(source.encode(), digest_size=6).hexdigest()
    pyc = root / f"launcher-{tag}.pyc"
    if pyc.exists():
        return pyc
    import importlib.util
    import marshal

    code = compile(source, "<sandbox-launcher>", "exec", dont_inherit=True, optimize=0)
    data = bytearray(importlib.util.MAGIC_NUMBER)
    data += (0b01).to_bytes(4, "little") + b"\0" * 8  # hash-based, unchecked: no source to stat
    data += marshal.dumps(code)
    tmp = pyc.with_name(pyc.name + f".tmp{os.getpid()}")
    tmp.write_bytes(bytes(data))
    os.chmod(tmp, 0o644)
    os.rename(tmp, pyc)
    return pyc
