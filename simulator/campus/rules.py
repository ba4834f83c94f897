"""When a campus pool's idle machines fall asleep, when jobs may start after an owner leaves, and
the hour of the nightly reboot."""

from __future__ import annotations

MINUTE = 60.0
CAMPUS_REBOOT_HOUR = 3.0
"""The papers' campus: every machine without a logged-in owner reboots at 03:00 (UTC here)."""


class PoolRules:
    """The campus policy knobs of paper 000 section 5 (defaults are the paper's)."""

    def __init__(
        self,
        sleep_open_s: float = 60 * MINUTE,
        sleep_closed_s: float = 15 * MINUTE,
        job_delay_open_s: float = 15 * MINUTE,
        reboot_hour: float | None = CAMPUS_REBOOT_HOUR,
        claim_leftovers: bool = True,
        wait_bound_s: float | None = None,
        control_percent: float | None = None,
        job_edits: bool = True,
    ) -> None:
        self.sleep_open_s = sleep_open_s
        self.sleep_closed_s = sleep_closed_s
        self.job_delay_open_s = job_delay_open_s
        self.reboot_hour = reboot_hour
        """None: the machines do not reboot nightly (``replay --reboot-hour none``)."""
        self.claim_leftovers = claim_leftovers
        """Partitionable machines: the schedd fills a matched slot's leftover at once
        (HTCondor's ``CLAIM_PARTITIONABLE_LEFTOVERS``, true by default; see packing.py)."""
        self.wait_bound_s = wait_bound_s
        """A job idle this long in its current wait (since its submission or its last
        eviction) is matched as without advice for the rest of that wait
        (``ADVISOR_WAIT_BOUND``; unadvised.py). None: advice may keep a job waiting forever."""
        self.control_percent = control_percent
        """The share of jobs (by their id) matched as without advice (``ADVISOR_CONTROL_PERCENT``;
        unadvised.py). None: no control group."""
        self.job_edits = job_edits
        """The daemon edits jobs (``pool.edit_jobs``). False: no per-job advice reaches the pool
        (``JobPrio``, ``AdvisorHoldUntil``, ``AdvisorNeedsHours``), and a job's class is its last
        attempt's hours, not its longest (no ``AdvisorPriorHours``)."""
