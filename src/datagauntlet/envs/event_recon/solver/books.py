"""What a reading books for every order: the contract's engine (`ledger.order_lines`) for the
contract, the delivery-by-delivery replay (`delivery.replay_lines`) for a misreading."""

from __future__ import annotations

from datagauntlet.envs.event_recon.solver.delivery import replay_lines
from datagauntlet.envs.event_recon.solver.ledger import Ledger, World, order_lines
from datagauntlet.envs.event_recon.solver.reading import CONTRACT, Reading


def compute(world: World, reading: Reading = CONTRACT) -> Ledger:
    """What `reading` says every order books: the contract's engine for the contract, the
    delivery-by-delivery one for a misreading (it books what a builder with that bug would)."""
    ledger = Ledger(manual=world.manual_rows() if reading.manual_stands else [])
    lines = order_lines if reading == CONTRACT else replay_lines
    for order_id in sorted(world.events):
        ledger.lines[order_id] = lines(world, order_id, reading)
    return ledger
