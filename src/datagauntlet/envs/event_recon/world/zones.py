"""The zone table: IANA zones read from the pinned `tzdata` package, not from the host.

Payout periods are calendar months in a program's zone (rule R9), so the zone database is an
input to the graded answer. Without `tzdata` the host's database is used and `source()` says
so, which is what the explain output and the docs report.
"""

from __future__ import annotations

import importlib.metadata
import importlib.resources
from datetime import tzinfo
from functools import cache
from zoneinfo import ZoneInfo

# Program payout zones: every one has a non-zero UTC offset, so a month boundary in the zone
# is never the UTC one; several observe DST.
PAYOUT_ZONES = (
    "America/Los_Angeles",
    "America/New_York",
    "America/Sao_Paulo",
    "Europe/Berlin",
    "Europe/Helsinki",
    "Asia/Kolkata",
    "Asia/Tokyo",
    "Australia/Sydney",
    "Pacific/Auckland",
)


@cache
def _pinned() -> str | None:
    try:
        version = importlib.metadata.version("tzdata")
        importlib.resources.files("tzdata.zoneinfo")
    except (importlib.metadata.PackageNotFoundError, ModuleNotFoundError):
        return None
    return version


def source() -> str:
    """Where zone rules come from: `tzdata <version>` (pinned) or `host` (the fallback)."""
    version = _pinned()
    return f"tzdata {version}" if version else "host"


@cache
def zone(name: str) -> tzinfo:
    """The zone `name`, from the pinned tzdata package when it is installed."""
    if _pinned():
        path = importlib.resources.files("tzdata.zoneinfo").joinpath(*name.split("/"))
        with path.open("rb") as fh:
            return ZoneInfo.from_file(fh, key=name)
    return ZoneInfo(name)
