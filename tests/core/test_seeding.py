"""Keyed-hash seeding: pure in (seed, label, index), stable across processes."""

import hashlib
import os
import subprocess
import sys

import pytest

from datagauntlet.core.seeding import Keyed, hash64, task_seed


def test_draws_are_pure_functions_of_seed_label_index() -> None:
    a, b = Keyed(7), Keyed(7)
    assert [a.randint("x", i, 0, 10**9) for i in range(50)] == [
        b.randint("x", i, 0, 10**9) for i in reversed(range(50))
    ][::-1]
    assert a.unit("x", 3) != a.unit("y", 3)
    assert Keyed(7).unit("x", 3) != Keyed(8).unit("x", 3)


def test_stream_draws_do_not_depend_on_other_streams() -> None:
    k = Keyed(1)
    s1 = k.stream("a")
    first = [s1.randint(0, 1000) for _ in range(10)]
    k2 = Keyed(1)
    other = k2.stream("b")
    _ = [other.unit() for _ in range(37)]  # draws elsewhere must not shift stream "a"
    s2 = k2.stream("a")
    assert [s2.randint(0, 1000) for _ in range(10)] == first


def test_randint_bounds_and_errors() -> None:
    k = Keyed(3)
    values = {k.randint("r", i, 2, 5) for i in range(400)}
    assert values == {2, 3, 4, 5}
    with pytest.raises(ValueError):
        k.randint("r", 0, 5, 2)
    with pytest.raises(ValueError):
        k.choice("c", 0, [])


def test_shuffled_is_a_permutation() -> None:
    items = list(range(30))
    out = Keyed(9).shuffled("s", items)
    assert sorted(out) == items and out != items


def test_splits_are_separate_streams() -> None:
    seeds = {s: {task_seed("env", s, i) for i in range(500)} for s in ("train", "eval", "test")}
    assert not seeds["train"] & seeds["eval"]
    assert not seeds["eval"] & seeds["test"]
    assert task_seed("env", "eval", 1) != task_seed("env", "eval", 0) + 1
    with pytest.raises(ValueError, match="unknown split"):
        task_seed("env", "dev", 0)


def test_same_digest_under_any_pythonhashseed() -> None:
    code = "from datagauntlet.core.seeding import hash64; print(hash64(1, 'a', {'k'}.pop()))"
    outs = set()
    for hs in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": hs}
        outs.add(
            subprocess.run(
                [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
            ).stdout
        )
    assert outs == {f"{hash64(1, 'a', 'k')}\n"}


def test_keyed_draws_equal_the_module_hash() -> None:
    k = Keyed(123)
    assert k._hash("label", 7) == hash64(123, "label", 7)
    assert k.unit("label", 7) == hash64(123, "label", 7) / 2**64


def test_stream_draws_equal_keyed_draws_by_index() -> None:
    # Streams hash from a cached (seed, label) prefix: the n-th draw must stay keyed (label, n).
    k = Keyed(20261201)
    s = k.stream("records")
    for n in range(0, 40, 4):
        assert s.unit() == k.unit("records", n)
        assert s.randint(1, 9_999) == k.randint("records", n + 1, 1, 9_999)
        assert s.choice("abcdefg") == k.choice("records", n + 2, "abcdefg")
        assert s.chance(0.5) == k.chance("records", n + 3, 0.5)
    with pytest.raises(ValueError):
        s.randint(2, 1)
    assert s.unit() == k.unit("records", 41)  # a refused range still used its index


def test_tokens_are_the_keyed_blake2b_of_seed_label_index() -> None:
    k = Keyed(7)
    for label, index in (("cursor", 0), ("record-id", 12), ("cursor", 3), ("record-id", "x")):
        h = hashlib.blake2b(f"7\x00{label}\x00{index}".encode(), digest_size=32, person=b"dg-token")
        assert k.token(label, index, 16) == h.hexdigest()[:16]


def test_keyed_draws_past_the_cached_labels_are_the_same_hash() -> None:
    k = Keyed("s")
    for label in [f"row-{i}" for i in range(300)] + ["row-0", "row-299"]:
        assert k.unit(label, 3) == hash64("s", label, 3) / 2**64


def test_keyed_draws_of_every_kind_of_index_equal_the_module_hash() -> None:
    k = Keyed(123)
    for index in (0, 9, 10, -1, 10**29, 10**30, -(10**30), 10**40, True, False, "7", "", 2.5):
        assert k._hash("label", index) == hash64(123, "label", index), index
        assert k.chance("label", index, 0.5) == (hash64(123, "label", index) / 2**64 < 0.5)


@pytest.mark.parametrize("n", [0, 1, 9, 10, 11, 99, 100, 101, 1_001, 10_001])
def test_index_feeds_and_bulk_draws_equal_their_definitions_across_digit_counts(n: int) -> None:
    """Bulk helpers format each index in runs of equal digit count: every run's edges must
    give the same bytes and digests as feeding the index one part at a time."""
    from datagauntlet.core.seeding import HashPrefix, _feed, index_feeds

    class Seen:
        def __init__(self) -> None:
            self.data = b""

        def update(self, data: bytes) -> None:
            self.data += data

    def fed(i: int) -> bytes:
        seen = Seen()
        _feed(seen, i)  # type: ignore[arg-type]
        return seen.data

    feeds = index_feeds(n)
    assert len(feeds) == n
    for i in {0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, n - 1} & set(range(n)):
        assert feeds[i] == fed(i)
    keyed = Keyed(2**40 + 7)
    draws = keyed.draws("bulk", n)
    stream = keyed.stream("bulk")
    assert draws == [stream._draw() for _ in range(n)]
    assert draws == HashPrefix(2**40 + 7, "bulk").at_feeds(feeds)
