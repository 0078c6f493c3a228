"""The held-out splits' secret: where it is read from, the key derived from it, its public name.

Only the key leaves this module: the seeds, split labels and task refs of held-out splits are
keyed by it (seeding.py), and the secret itself is never kept.
"""

from __future__ import annotations

import hashlib
import os
import re

from datagauntlet.core.user_files import FileRefused, read_bytes

# Held-out splits: seeds keyed by a secret, so only its holder can regenerate them. Training and
# leaderboard evaluation use these.
HELD_OUT_SPLITS = ("private", "private-train")
SECRET_ENV = "DATAGAUNTLET_SECRET"
SECRET_FILE_ENV = "DATAGAUNTLET_SECRET_FILE"
MIN_SECRET_BYTES = 16
MAX_SECRET_FILE_BYTES = 4096  # a secret is a line of text; a larger file is a wrong path


# A task seed is a 63-bit keyed draw: it has ten digits or more but for about one in 10**10.
_SEED_LIKE = re.compile(r"\d{10,}")


def scrub_seeds(text: str) -> str:
    """`text` with every run of ten or more digits masked, for exception text that leaves the
    process (server logs, error records, tool errors): whoever wrote the message, it cannot carry
    a held-out seed. Short numbers (counts, ports, amounts) are kept."""
    return _SEED_LIKE.sub("<number>", text)


class SecretMissing(ValueError):
    """A held-out split was asked for without a secret."""


def read_secret() -> bytes | None:
    path = os.environ.get(SECRET_FILE_ENV)
    if path:
        try:
            data = read_bytes(path, MAX_SECRET_FILE_BYTES, "secret file").strip()
        except FileRefused as exc:
            raise SecretMissing(str(exc)) from None
        if not data:
            raise SecretMissing(f"the secret file {path!r} is empty")
    else:
        text = os.environ.get(SECRET_ENV, "")
        if not text:
            return None
        data = text.strip().encode("utf-8")
    if len(data) < MIN_SECRET_BYTES:
        raise SecretMissing(f"the secret must be at least {MIN_SECRET_BYTES} bytes long")
    return data


def secret_key() -> bytes:
    """A 64-byte blake2b key derived from the secret; the secret itself is never kept."""
    data = read_secret()
    if data is None:
        raise SecretMissing(
            f"held-out splits ({', '.join(HELD_OUT_SPLITS)}) need a secret: set {SECRET_ENV} "
            "or pass --secret-file PATH"
        )
    return hashlib.blake2b(data, digest_size=64, person=b"dg-secret-key").digest()


def use_secret_file(path: str | os.PathLike[str]) -> None:
    """Read held-out seeds from the secret in this file (also in worker processes)."""
    previous = os.environ.get(SECRET_FILE_ENV)
    os.environ[SECRET_FILE_ENV] = os.fspath(path)
    try:
        secret_key()  # fail now, with the reason, rather than at the first held-out task
    except BaseException:  # a secret that cannot be read is not left in use
        if previous is None:
            os.environ.pop(SECRET_FILE_ENV, None)
        else:
            os.environ[SECRET_FILE_ENV] = previous
        raise


def secret_id() -> str:
    """A short public name for the secret in use (a keyed digest; the secret cannot be
    recovered from it), so published held-out figures can say which secret they are for."""
    return hashlib.blake2b(key=secret_key(), digest_size=8, person=b"dg-secret-id").hexdigest()


def has_secret() -> bool:
    return read_secret() is not None
