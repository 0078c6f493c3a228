"""Keyed-hash seeding: pure in (seed, label, index), stable across processes."""

import hashlib
import os
import subprocess
import sys

import pytest

from datagauntlet.core.seeding import (
    HashPrefix,
    Keyed,
    feed_bytes,
    hash64,
    hash64_fed,
    hash64_int_fed,
    hash64_ints_fed,
    index_feeds,
    task_seed,
)


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


# The batch helpers generators use per cell must give the very digests of hash64 / token.
_PARTS = ((), ("a",), ("ab", "c"), ("a", "bc"), (7, "é", 2.5), ("x" * 300, "", 10**40))


def test_fed_bytes_hash_to_the_module_hash() -> None:
    for parts in _PARTS:
        assert hash64_fed(feed_bytes(*parts)) == hash64(*parts), parts
    assert feed_bytes("ab", "c") != feed_bytes("a", "bc")  # each part is length-prefixed


def test_an_int_first_part_hashes_as_hash64_does() -> None:
    for first in (0, 7, 10, 12345, 10**20):
        for parts in _PARTS:
            fed = feed_bytes(*parts)
            assert hash64_int_fed(first, fed) == hash64(first, *parts), (first, parts)
        assert hash64_ints_fed([first, first + 1, 3], fed) == [
            hash64(first, *parts),
            hash64(first + 1, *parts),
            hash64(3, *parts),
        ]


def test_a_hash_prefix_continues_to_the_module_hash() -> None:
    prefix = HashPrefix(99, "cells")
    for parts in _PARTS:
        assert prefix.at(*parts) == hash64(99, "cells", *parts), parts
    assert prefix.at(1) == prefix.at(1)  # the shared prefix is not consumed by a draw
    assert prefix.at_feeds(index_feeds(12)) == [hash64(99, "cells", i) for i in range(12)]


def test_batched_tokens_and_draws_equal_one_at_a_time() -> None:
    k = Keyed(41)
    assert k.tokens("record-id", 13, 10) == [k.token("record-id", i, 10) for i in range(13)]
    assert k.tokens("record-id", 3) != k.tokens("cursor", 3)  # the label keys the tokens
    assert k.draws("records", 12) == [k._hash("records", i) for i in range(12)]
    assert k.draws("records", 2) != k.draws("other", 2)


def test_a_stream_sample_is_the_keyed_sample_of_its_label_and_position() -> None:
    k = Keyed(5)
    s = k.stream("pick")
    items = list(range(30))
    first = s.sample(items, 4)
    assert first == k.sample("pick#0", items, 4) and len(set(first)) == 4
    assert s.sample(items, 4) == k.sample("pick#1", items, 4)  # the next position
    assert s.unit() == k.unit("pick", 2)
