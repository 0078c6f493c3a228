"""The content hash of a dirty-integration task commits to every record, cursor and the quota,
written as one canonical JSON document of plain arrays (how the world is held in memory may
change; these bytes, and so every published task hash, may not)."""

from __future__ import annotations

import hashlib

import datagauntlet as dg
from datagauntlet.core.action_log import canonical_json


def test_world_content_is_the_records_as_arrays_the_cursors_and_the_quota() -> None:
    env = dg.make("dirty-integration", profile="hostile", num_records=37, page_size=5)
    with env.episode(env.tasks("eval", 1)[0]) as ep:
        w = ep.world
        expected = {
            "records": [[r.id, r.amount, r.customer, r.created_at] for r in w.records],
            "cursors": list(w.cursors),
            "quota": w.quota,
        }
        assert canonical_json(ep.world_content()) == canonical_json(expected)
        again = env.episode(env.tasks("eval", 1)[0])
        assert again.content_hash == ep.content_hash and len(ep.content_hash) == 32
        again.close()


def test_the_published_task_hash_of_the_first_eval_task_is_unchanged() -> None:
    env = dg.make("dirty-integration")
    with env.episode(env.tasks("eval", 1)[0]) as ep:
        text = canonical_json(ep.world_content())
        assert hashlib.sha256(text.encode()).hexdigest()[:16] == _PINNED


_PINNED = "08d03788012f01fa"  # sha256 prefix of the first eval task's world content
