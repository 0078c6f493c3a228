"""Each test starts and ends with the secret variables it found. `--secret-file` sets
DATAGAUNTLET_SECRET_FILE in os.environ on purpose (so worker processes read the same secret),
and a CLI's main() called in-process would otherwise leave it to every later test on the same
xdist worker, where it outranks their own DATAGAUNTLET_SECRET and draws other private tasks."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from datagauntlet.core import seeding

_NAMES = (seeding.SECRET_ENV, seeding.SECRET_FILE_ENV)


@pytest.fixture(autouse=True)
def _secret_variables_restored() -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in _NAMES}
    yield
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
