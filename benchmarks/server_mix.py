"""The session server benchmark's traffic: which envs, how many sessions, what each one calls.

Every session replays a trajectory recorded before the run: the env's reference policy played
in process on one task, every tool call it made, and the reward it got. The server's episode of
the same task is the same world, so the replay gets the same results, and the reply that ends
it must carry that reward (anything else counts as an error). The client never plays a policy
or parses a result during the run: it sends frames encoded beforehand and checks each reply's
first bytes.

The mix (sessions per env, share of the calls per env) is a command-line choice; the default
and why it is what it is are in DEFAULT_MIX's comment and docs/server.md.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from wsload import client_frame

# env id: (concurrent sessions, share of all tool calls). The shares follow each env's cost per
# episode, not its popularity: an event-recon episode spends ~60 ms of CPU building its world
# and grading its script in a sandbox, and dataclean's reference plays a one-call episode (a
# world built and graded per call); at an equal share of 2,000 calls/s those two alone would
# need more than the machine's two cores for world building. So they take 1% of the calls
# each, at an agent's pace (an event-recon session calls every ~0.8 s, so its 12-call episodes
# end inside a short run; a dataclean session plays an episode every ~2.4 s), and
# dirty-integration and bad-batch-gate sessions step like fast scripted policies
# (~13 and ~7.5 calls/s per session).
DEFAULT_MIX: dict[str, tuple[int, float]] = {
    "dirty-integration": (96, 0.62),
    "bad-batch-gate": (96, 0.36),
    "dataclean": (48, 0.01),
    "event-recon": (16, 0.01),
}


@dataclass(frozen=True)
class Trajectory:
    env: str
    task: int
    open_body: bytes  # POST /sessions body
    open_frame: bytes  # the same request as a WebSocket {"op": "open"} message
    frames: tuple[bytes, ...]  # one masked WebSocket frame per tool call
    reward: float


def parse_mix(text: str | None) -> dict[str, tuple[int, float]]:
    """`env=SESSIONS:SHARE,...` (shares are normalised to sum to 1)."""
    if not text:
        return dict(DEFAULT_MIX)
    mix: dict[str, tuple[int, float]] = {}
    for part in text.split(","):
        env, _, rest = part.partition("=")
        sessions, _, share = rest.partition(":")
        try:
            mix[env.strip()] = (int(sessions), float(share or 1.0))
        except ValueError:
            raise SystemExit(f"--mix: {part!r} is not env=SESSIONS:SHARE") from None
    total = sum(share for _, share in mix.values())
    if total <= 0 or any(n < 1 or s < 0 for n, s in mix.values()):
        raise SystemExit("--mix: every env needs >= 1 session and a share >= 0, not all 0")
    return {env: (n, share / total) for env, (n, share) in mix.items()}


def record(env_id: str, tasks: int) -> list[Trajectory]:
    """The reference policy's calls on tasks 0..tasks-1 of the eval split, played in process."""
    import datagauntlet as dg
    from datagauntlet.core.replay import next_tool_call

    env = dg.make(env_id)
    policy = env.policies()[env.registration.reference]
    out = []
    for task in range(tasks):
        ep = env.episode(env.make_task("eval", task))
        try:
            calls, results = [], []
            while not ep.done:
                call = next_tool_call(policy, ep.system_prompt, ep.prompt, ep.tool_specs, results)
                if call is None:
                    break
                calls.append({"name": call.name, "arguments": call.arguments})
                results.append(ep.call(call.name, call.arguments))
            if not ep.done:
                raise SystemExit(f"{env_id} task {task}: the reference did not end the episode")
            reward = ep.score().reward
        finally:
            ep.close()
        opening = {"env": env_id, "split": "eval", "task": task}
        out.append(
            Trajectory(
                env_id,
                task,
                json.dumps(opening).encode(),
                client_frame(json.dumps({"op": "open", **opening}).encode()),
                tuple(client_frame(json.dumps(c).encode()) for c in calls),
                reward,
            )
        )
    return out
