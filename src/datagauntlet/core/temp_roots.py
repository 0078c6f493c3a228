"""Temporary directories owned by an object: removed by its `close`, and by a finaliser when
the object is dropped without one (an episode nobody closed) or the interpreter exits, so no
run leaves its directories behind in /tmp."""

from __future__ import annotations

import shutil
import tempfile
import weakref
from pathlib import Path


class TempRoot:
    """A fresh directory under the system's temporary directory, tied to `owner`'s lifetime."""

    def __init__(self, owner: object, prefix: str) -> None:
        self.path = Path(tempfile.mkdtemp(prefix=prefix)).resolve()
        # The finaliser holds the path, never the owner (that would keep it alive forever).
        self._remove = weakref.finalize(owner, shutil.rmtree, str(self.path), True)

    def remove(self) -> None:
        """Remove the directory now (at most once; later calls do nothing)."""
        self._remove()

    @property
    def removed(self) -> bool:
        return not self._remove.alive
