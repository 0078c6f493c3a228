"""toy-guess's one registration: the only place the env is named."""

from datagauntlet.core.limits import Limits
from datagauntlet.core.registration import Registration

REGISTRATION = Registration(
    id="toy-guess",
    entry_point="toyland.toy_guess.env:ToyGuessEnv",
    reference="peek-then-answer",
    limits=Limits(max_turns=4, max_turns_cap=8, max_calls=12),
    summary="peek at a number, then answer it",
    has_verifiers_module=False,
)
