"""Which schedds the source reads when ``pool.schedds`` is empty: every one the collector knows,
asked again at each poll.

Access points come and go while the daemon runs: a new one is added, one is retired, one is
restarted (a schedd shutting down takes its ad out of the collector, and a hung one's ad expires
once it stops sending updates). A schedd found is read from its saved cursor if it had one, so a
schedd that left and came back is read on from where it stopped; one that left keeps its cursor
here for that. A collector that does not answer leaves the list as it was; one that has just
started itself knows only the daemons that have sent their ads since, so its list is taken as
incomplete (``source.py``) and nobody is taken to have left.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from advisor.condor.retry import Backoff
from advisor.condor.schedd_reader import ScheddReader

log = logging.getLogger("htcondor_advisor.pool")


@dataclass
class ScheddDirectory:
    names: Callable[[], list[str]]
    """The ``Name`` of every schedd ad in the collector."""
    reader: Callable[[str], ScheddReader]
    cursors: dict[str, Any] = field(default_factory=dict)
    """Saved state of schedds not read now (restored, or left the collector)."""

    def update(
        self, readers: list[ScheddReader], backoff: Backoff, now: float, complete: bool = True
    ) -> list[ScheddReader]:
        """The readers for the schedds the collector shows now (``readers`` when it did not
        answer), each new or returning one loaded from its cursor; says who came and went. Not
        ``complete`` (a collector just started), a schedd it does not show yet is kept."""
        found = backoff.call(self.names, now)
        if found is None:
            return readers
        kept = {r.name: r for r in readers if r.name in found or not complete}
        for gone in (r for r in readers if r.name not in kept):
            self.cursors[gone.name] = gone.state()
            log.warning(
                "schedd %s left the collector: its jobs are out of the view until it returns",
                gone.name,
            )
        for name in (n for n in dict.fromkeys(found) if n not in kept):
            kept[name] = self.reader(name)
            kept[name].load(self.cursors.get(name, {}))
            log.info("schedd %s found: reading its jobs", name)
        return list(kept.values())

    def restore(self, cursors: Mapping[str, Any]) -> None:
        self.cursors = dict(cursors)
