"""event-recon's held-out family module: three defect families the public split never draws.

`family_module="datagauntlet_heldout.event_recon"`, which the `private` and `private-train`
splits load by themselves when this distribution is installed. The module brings families
only: the held-out splits keep their secret-keyed seeds.

Each family brings everything event-recon needs of a family, and the public package knows
none of it: its contract line (`summary`), how it is planted (`plan`, `apply`), the rule and
latent builder bug it is tied to, and its reference step (`misreadings`, `seen_on`), with
which the reference policy names it. None needs a rule the contract does not already state,
so the independent reconciler cross-checks every task that draws one, unchanged.
"""

from __future__ import annotations

from datagauntlet_heldout.er_reference import StaleCodeRow
from datagauntlet_heldout.er_wire import AmendmentOvertookOrder, BackfillReplay

ENV = "event-recon"
FAMILIES = [AmendmentOvertookOrder(), BackfillReplay(), StaleCodeRow()]
