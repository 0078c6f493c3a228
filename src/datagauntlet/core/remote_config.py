"""Which config keys a remote client may set: each env declares them, the doors ask here.

A config that arrives over a socket (a session server's `POST /sessions`, WebSocket `open`,
OpenEnv `reset`) or from a file someone else wrote (a run file given to `rescore`) is not the
operator's. Keys that name a module (`family_module`: imported into the process) or a path
(`cases`: opened on the host, and whether it opens tells the client the path exists) are the
operator's alone. Each env lists the keys that are safe in its registration
(`Registration.remote_config`); every other key is refused with one line naming it, unless
the operator trusts the source explicitly (`server --trust-client-config`,
`rescore --trust-run-config`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# Safe for every env: the base config's turn budget, bounded by the env's limits.
ALWAYS_SAFE = ("max_turns",)
# Never safe from outside, whatever an env declares: they reach the importer.
NEVER_SAFE = ("family_module",)


class UntrustedConfig(ValueError):
    """A config key from an untrusted source that its env does not declare safe."""


def safe_keys(env_id: str) -> tuple[str, ...]:
    """The config keys `env_id` accepts from a remote client."""
    from datagauntlet.core.registry import registration

    declared = registration(env_id).remote_config  # ValueError names an unknown env
    return tuple(dict.fromkeys((*ALWAYS_SAFE, *declared)))


def check_remote_config(env_id: str, config: Mapping[str, Any], *, trust_hint: str) -> None:
    """Refuse the first key of `config` that `env_id` does not declare safe for remote
    clients and that is set to anything but its default (a run file lists every field, and
    `family_module: null` imports nothing); `trust_hint` says how the operator would accept
    it anyway. Unknown keys are left to the config's own check, which names them."""
    from datagauntlet.core.registry import env_class

    allowed = safe_keys(env_id)
    config_cls = env_class(env_id).config_cls
    default, fields = config_cls(), set(config_cls.field_names())
    for key in sorted(config, key=str):
        if key in fields and key not in allowed and config[key] != getattr(default, key):
            raise UntrustedConfig(
                f"config key {str(key)[:80]!r} is not accepted from an untrusted source by "
                f"{env_id} (safe keys: {', '.join(allowed)}); {trust_hint}"
            )
