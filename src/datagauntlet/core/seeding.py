"""Keyed-hash randomness: every random choice is a pure function of (seed, label, index).

There is no RNG stream to share, so one extra draw in one place never shifts a draw anywhere
else, and the same seed gives the same world in any process under any PYTHONHASHSEED.
"""

from __future__ import annotations

import hashlib
import heapq
from collections.abc import Sequence
from typing import TypeVar

# The secret's names are also reached here (seeding.SECRET_ENV, seeding.use_secret_file, ...).
from datagauntlet.core.secret import HELD_OUT_SPLITS as HELD_OUT_SPLITS
from datagauntlet.core.secret import MIN_SECRET_BYTES as MIN_SECRET_BYTES
from datagauntlet.core.secret import SECRET_ENV as SECRET_ENV
from datagauntlet.core.secret import SECRET_FILE_ENV as SECRET_FILE_ENV
from datagauntlet.core.secret import SecretMissing as SecretMissing
from datagauntlet.core.secret import has_secret as has_secret
from datagauntlet.core.secret import secret_id as secret_id
from datagauntlet.core.secret import secret_key
from datagauntlet.core.secret import use_secret_file as use_secret_file

T = TypeVar("T")

_DENOM = float(1 << 64)


_EMPTY = hashlib.blake2b(digest_size=8, person=b"datagauntlet")
# _feed's 4-byte length prefixes of the short texts a counter renders to.
_MAX_HEADS = 256
_LENGTH_PREFIX = tuple(n.to_bytes(4, "little") for n in range(32))


def _feed(h: hashlib.blake2b, part: object) -> None:
    data = str(part).encode("utf-8")
    h.update(len(data).to_bytes(4, "little") + data)  # length-prefixed: ("ab","c") != ("a","bc")


def _index_formats(n: int) -> list[tuple[bytes, int, int]]:
    """(format, lo, hi): `format % i` is the bytes `_feed` gives each i in [lo, hi), one run of
    indexes per digit count (their 4-byte length prefix is the same), up to n."""
    runs = []
    lo, digits = 0, 1
    while lo < n:
        hi = min(n, 10**digits)
        runs.append((_LENGTH_PREFIX[digits].replace(b"%", b"%%") + b"%d", lo, hi))
        lo, digits = hi, digits + 1
    return runs


def index_feeds(n: int) -> list[bytes]:
    """The bytes `_feed` gives each index 0..n-1: made once, then fed under many prefixes."""
    out: list[bytes] = []
    for fmt, lo, hi in _index_formats(n):  # one formatting an index: prefix and digits at once
        out += [fmt % i for i in range(lo, hi)]
    return out


def feed_bytes(*parts: object) -> bytes:
    """What `hash64` feeds for these parts: `hash64(*a, *b) == hash64_fed(feed_bytes(*a, *b))`."""
    return b"".join(len(d).to_bytes(4, "little") + d for d in (str(p).encode() for p in parts))


def hash64_fed(fed: bytes) -> int:
    """`hash64` of parts already rendered by `feed_bytes` (one update instead of one a part)."""
    h = _EMPTY.copy()
    h.update(fed)
    return int.from_bytes(h.digest(), "little")


def hash64_int_fed(first: int, fed: bytes) -> int:
    """`hash64(first, *parts)` for a non-negative int `first` and `fed = feed_bytes(*parts)`."""
    data = b"%d" % first
    h = _EMPTY.copy()
    h.update(_LENGTH_PREFIX[len(data)] + data + fed)
    return int.from_bytes(h.digest(), "little")


def hash64_ints_fed(firsts: Sequence[int], fed: bytes) -> list[int]:
    """`[hash64_int_fed(first, fed) for first in firsts]` in one tight loop."""
    copy, from_bytes, prefix = _EMPTY.copy, int.from_bytes, _LENGTH_PREFIX
    out = []
    append = out.append
    for first in firsts:
        data = b"%d" % first
        h = copy()
        h.update(prefix[len(data)] + data + fed)
        append(from_bytes(h.digest(), "little"))
    return out


def _digests(head: hashlib.blake2b, feeds: Sequence[bytes]) -> list[int]:
    copy, from_bytes = head.copy, int.from_bytes
    out = []
    append = out.append
    for data in feeds:
        h = copy()
        h.update(data)
        append(from_bytes(h.digest(), "little"))
    return out


def hash64(*parts: object) -> int:
    """A 64-bit blake2b digest of the parts, each rendered as stable, length-prefixed text."""
    h = _EMPTY.copy()
    for part in parts:
        _feed(h, part)
    return int.from_bytes(h.digest(), "little")


class HashPrefix:
    """`HashPrefix(*a).at(*b) == hash64(*a, *b)`, with the shared prefix hashed only once.

    For generators that draw once per cell of a large table under the same few labels.
    """

    __slots__ = ("_h",)

    def __init__(self, *parts: object) -> None:
        self._h = _EMPTY.copy()
        for part in parts:
            _feed(self._h, part)

    def at(self, *parts: object) -> int:
        h = self._h.copy()
        for part in parts:
            _feed(h, part)
        return int.from_bytes(h.digest(), "little")

    def at_feeds(self, feeds: Sequence[bytes]) -> list[int]:
        """`[self.at(i) for i in range(n)]` for `feeds = index_feeds(n)`, in one tight loop."""
        return _digests(self._h, feeds)


def unit(*parts: object) -> float:
    """A float in [0, 1) keyed by the parts."""
    return hash64(*parts) / _DENOM


class Keyed:
    """Draws keyed by (seed, label, index). `index` is explicit: callers name each draw.

    `stream(label)` gives a `Stream`, a counter over one label, for generators that make
    many draws of one kind; each stream's draws depend only on its own label and counter.
    """

    __slots__ = ("_base", "_heads", "_token_heads", "seed")

    def __init__(self, seed: int | str) -> None:
        self.seed = seed
        # The seed's part of the hash is fed once; each draw copies it (same digest as hash64).
        self._base = _EMPTY.copy()
        _feed(self._base, seed)
        self._token_heads: dict[str, hashlib.blake2b] = {}
        # (seed, label) prefixes of the labels drawn from; bounded, as labels can be made per row.
        self._heads: dict[str, hashlib.blake2b] = {}

    def _head(self, label: str) -> hashlib.blake2b:
        head = self._heads.get(label)
        if head is None:
            head = self._base.copy()
            _feed(head, label)
            if len(self._heads) < _MAX_HEADS:
                self._heads[label] = head
        return head

    def _hash(self, label: str, index: int | str) -> int:
        head = self._heads.get(label)  # looked up here: a fault schedule draws per request
        h = (head if head is not None else self._head(label)).copy()
        # The bytes _feed would give, without its call: a counter or a short name ("3/1").
        data = b"%d" % index if type(index) is int else str(index).encode()
        n = len(data)
        h.update((_LENGTH_PREFIX[n] if n < 32 else n.to_bytes(4, "little")) + data)
        return int.from_bytes(h.digest(), "little")

    def unit(self, label: str, index: int | str = 0) -> float:
        return self._hash(label, index) / _DENOM

    def chance(self, label: str, index: int | str, p: float) -> bool:
        return self._hash(label, index) / _DENOM < p  # unit(label, index) < p, one call less

    def randint(self, label: str, index: int | str, lo: int, hi: int) -> int:
        """An integer in [lo, hi], both ends included."""
        if hi < lo:
            raise ValueError(f"empty range [{lo}, {hi}]")
        return lo + self._hash(label, index) % (hi - lo + 1)

    def choice(self, label: str, index: int | str, options: Sequence[T]) -> T:
        if not options:
            raise ValueError("choice from an empty sequence")
        return options[self._hash(label, index) % len(options)]

    def shuffled(self, label: str, items: Sequence[T]) -> list[T]:
        """A permutation: sort by a keyed hash of each position (ties impossible in practice)."""
        keys = _digests(self._head(label), index_feeds(len(items)))
        # A stable sort by key alone: ties (never seen) fall back to position, as (key, i) would.
        return [items[i] for i in sorted(range(len(items)), key=keys.__getitem__)]

    def sample(self, label: str, items: Sequence[T], k: int) -> list[T]:
        if k > len(items):
            raise ValueError(f"sample of {k} from {len(items)} items")
        keys = _digests(self._head(label), index_feeds(len(items)))
        # == shuffled(label, items)[:k]: nsmallest is documented equal to sorted(...)[:k].
        return [items[i] for i in heapq.nsmallest(k, range(len(items)), key=keys.__getitem__)]

    def _token_head(self, label: str) -> hashlib.blake2b:
        head = self._token_heads.get(label)
        if head is None:  # the (seed, label) part is hashed once per label, not per token
            head = hashlib.blake2b(digest_size=32, person=b"dg-token")
            head.update(f"{self.seed}\x00{label}\x00".encode())
            self._token_heads[label] = head
        return head

    def token(self, label: str, index: int | str, length: int = 12) -> str:
        """An opaque lowercase hex token: unguessable without the seed, stable with it."""
        h = self._token_head(label).copy()
        h.update(str(index).encode())
        return h.hexdigest()[:length]

    def tokens(self, label: str, n: int, length: int = 12) -> list[str]:
        """`[self.token(label, i, length) for i in range(n)]` in one tight loop."""
        copy = self._token_head(label).copy
        out = []
        append = out.append
        for i in range(n):
            h = copy()
            h.update(b"%d" % i)
            append(h.hexdigest()[:length])
        return out

    def draws(self, label: str, n: int) -> list[int]:
        """The 64-bit hashes behind `stream(label)`'s first n draws, made in one loop (each
        index's bytes formatted as it is fed: no list of n feeds first)."""
        copy, from_bytes = self._head(label).copy, int.from_bytes
        out: list[int] = []
        append = out.append
        for fmt, lo, hi in _index_formats(n):
            for i in range(lo, hi):
                h = copy()
                h.update(fmt % i)
                append(from_bytes(h.digest(), "little"))
        return out

    def stream(self, label: str) -> Stream:
        return Stream(self, label)


class Stream:
    """Sequential draws under one label; the n-th draw is keyed by (seed, label, n)."""

    __slots__ = ("_head", "_keyed", "_label", "_n")

    def __init__(self, keyed: Keyed, label: str) -> None:
        self._keyed = keyed
        self._label = label
        self._n = 0
        # (seed, label) fed once: each draw copies it and feeds only n (same digest as _hash).
        self._head = keyed._base.copy()
        _feed(self._head, label)

    def _next(self) -> int:
        n = self._n
        self._n += 1
        return n

    def _draw(self) -> int:
        n = self._n
        self._n = n + 1
        data = b"%d" % n  # == str(n).encode(): the bytes _feed would give
        h = self._head.copy()
        h.update(_LENGTH_PREFIX[len(data)] + data)
        return int.from_bytes(h.digest(), "little")

    def unit(self) -> float:
        return self._draw() / _DENOM

    def chance(self, p: float) -> bool:
        return self.unit() < p

    def randint(self, lo: int, hi: int) -> int:
        """An integer in [lo, hi], both ends included."""
        drawn = self._draw()  # the counter moves even on a refused range
        if hi < lo:
            raise ValueError(f"empty range [{lo}, {hi}]")
        return lo + drawn % (hi - lo + 1)

    def uniform(self, lo: float, hi: float) -> float:
        return lo + (hi - lo) * self.unit()

    def choice(self, options: Sequence[T]) -> T:
        drawn = self._draw()
        if not options:
            raise ValueError("choice from an empty sequence")
        return options[drawn % len(options)]

    def shuffled(self, items: Sequence[T]) -> list[T]:
        return self._keyed.shuffled(f"{self._label}#{self._next()}", items)

    def sample(self, items: Sequence[T], k: int) -> list[T]:
        return self._keyed.sample(f"{self._label}#{self._next()}", items, k)

    def token(self, length: int = 12) -> str:
        return self._keyed.token(self._label, self._next(), length)


# Public splits: anyone with the code can rebuild their worlds (and so their truth). They are
# for published, comparable tables.
SPLITS = ("train", "eval", "test")
# Held-out splits (HELD_OUT_SPLITS, secret.py): seeds keyed by the secret.
ALL_SPLITS = SPLITS + HELD_OUT_SPLITS


def is_held_out(split: str) -> bool:
    return split in HELD_OUT_SPLITS


def check_split(split: str, extra: Sequence[str] = ()) -> None:
    """A ValueError naming the choices for a split that does not exist."""
    if split in ALL_SPLITS or split in extra:
        return
    choices = ", ".join((*ALL_SPLITS, *extra))
    raise ValueError(f"unknown split {split!r}; expected one of {choices}")


def split_key(env_id: str, split: str) -> str:
    """A label for split-wide draws (e.g. the order of families in a split). Public splits use
    their name; a held-out split's label is keyed by the secret, so even which family sits at
    which index cannot be rebuilt without it."""
    if not is_held_out(split):
        return split
    h = hashlib.blake2b(key=secret_key(), digest_size=16, person=b"dg-split-key")
    h.update(f"{env_id}\x00{split}".encode())
    return f"{split}:{h.hexdigest()}"


def task_seed(env_id: str, split: str, index: int) -> int:
    """The seed of task `index` of `split`: each split is its own hash stream. Held-out seeds
    are a keyed blake2b (a MAC) of (env, split, index) under the secret."""
    check_split(split)
    if is_held_out(split):
        h = hashlib.blake2b(key=secret_key(), digest_size=8, person=b"dg-held-out")
        h.update(f"{env_id}\x00{split}\x00{index}".encode())
        return int.from_bytes(h.digest(), "little") >> 1
    return hash64("task-seed", env_id, split, index) >> 1  # 63 bits: fits a signed int64


# --- held-out task refs: what stands in for a held-out seed outside the process ----------------
REF_PREFIX = "ref-"


def task_ref(key: bytes, split: str, index: int, seed: int) -> str:
    """An opaque, stable id of a held-out task: a keyed blake2b (a MAC) of (split, index, seed),
    so it names the task without revealing its seed, and the same task always gets the same
    ref under the same key."""
    h = hashlib.blake2b(key=key, digest_size=10, person=b"dg-task-ref")
    h.update(f"{split}\x00{index}\x00{seed}".encode())
    return REF_PREFIX + h.hexdigest()


def secret_ref_key() -> bytes:
    """The key of held-out splits' refs: derived from the secret, apart from the seeds' key."""
    return hashlib.blake2b(secret_key(), digest_size=32, person=b"dg-ref-key").digest()


def module_ref_key(env_id: str, split: str, seeds: Sequence[int]) -> bytes:
    """The key of a family module split's refs: a digest of all its seeds, which only the
    module's holder has (a module whose seeds are guessable is guessable whatever we show)."""
    h = hashlib.blake2b(digest_size=32, person=b"dg-module-ref")
    h.update(f"{env_id}\x00{split}\x00".encode())
    h.update(b",".join(b"%d" % s for s in seeds))
    return h.digest()
