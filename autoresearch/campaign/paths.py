"""Where a campaign keeps its state: $AUTORESEARCH_HOME/campaigns/<name>/.

`CampaignPaths` is the one place that names the files of a campaign folder (like compute's
`ComputePaths`); no other module spells them.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from compute.paths import resolve_home

from autoresearch.campaign.errors import LedgerError

Home = str | os.PathLike[str] | None

CAMPAIGN_NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$"
"""A campaign name: letters, digits and `._-`, starting with a letter or digit, at most 100."""


def campaigns_root(home: Home = None) -> Path:
    """The folder holding one sub-folder per campaign."""
    return resolve_home(home) / "campaigns"


def campaign_dir(name: str, home: Home = None) -> Path:
    """The state folder of campaign `name` (not created). The one place a campaign name becomes a
    path: a name that is not one (`../x`, `/abs`, `a/b`, `..`) is a LedgerError, so no command
    reads or writes outside the home's campaigns."""
    if not isinstance(name, str) or not re.fullmatch(CAMPAIGN_NAME, name):
        raise LedgerError(
            f"{name!r} is not a campaign name: use letters, digits and ._- (starting with a letter or digit, "
            f"at most 100; no '/'). `autoresearch status` lists the campaigns in {campaigns_root(home)}."
        )
    return campaigns_root(home) / name


@dataclass(frozen=True)
class CampaignPaths:
    """The files of one campaign folder (none is created here)."""

    root: Path
    """The campaign's state folder."""

    @classmethod
    def of(cls, name: str, home: Home = None) -> CampaignPaths:
        return cls(campaign_dir(name, home))

    @property
    def name(self) -> str:
        return self.root.name

    @property
    def ledger_db(self) -> Path:
        """The trial ledger: an Optuna study in RDB storage (optuna-dashboard reads it)."""
        return self.root / "optuna.db"

    @property
    def ledger_marker(self) -> Path:
        """Written when the ledger's study is created (its `started_at`): a later `optuna.db` without
        that study was truncated, deleted or replaced, and is refused rather than started afresh."""
        return self.root / "ledger.started"

    @property
    def config_checked(self) -> Path:
        """Which stored config this code accepted, and the source files that judged it (JSON): a
        reader of that config with those files unchanged need not validate it again
        (`ledger._integrity.checked_config`)."""
        return self.root / "config.checked"

    @property
    def ledger_lock(self) -> Path:
        """Held exclusively while a ledger is created, shared while one is loaded."""
        return self.root / "ledger.lock"

    @property
    def graph_db(self) -> Path:
        """The LangGraph checkpointer of the runner's graph (one thread per campaign)."""
        return self.root / "graph.db"

    @property
    def inbox_db(self) -> Path:
        """The steering inbox (SQLite, WAL): chat, the CLI, the API and nightly append to it."""
        return self.root / "inbox.db"

    @property
    def tracking_outbox(self) -> Path:
        """The runner's MLflow writes not applied yet (`tracking.outbox`; SQLite, WAL)."""
        return self.root / "tracking-outbox.db"

    @property
    def overrides(self) -> Path:
        """The search space, budget and priority changed from chat (JSON)."""
        return self.root / "steering.json"

    @property
    def approvals(self) -> Path:
        """The approval requests and their answers (JSON; the runner is its only writer)."""
        return self.root / "approvals.json"

    @property
    def lock(self) -> Path:
        """Held (fcntl) by the live runner; holds its pid as text."""
        return self.root / "runner.lock"

    @property
    def runner_log(self) -> Path:
        """The output of runners started with `autoresearch run --detach` (each appends to it)."""
        return self.root / "runner.log"

    @property
    def report_dir(self) -> Path:
        """The default folder of `autoresearch report` (report.md and its plots)."""
        return self.root / "report"

    @property
    def workspaces_dir(self) -> Path:
        """The git worktrees of a code-edit campaign's trials."""
        return self.root / "workspaces"

    def checkpoint_dir(self, ledger: str, trial: int) -> Path:
        """AR_CHECKPOINT_DIR of the trials continuing trial number `trial` (and of that trial), in
        the ledger with identity `ledger` (`TrialLedger.identity`)."""
        return self.root / "checkpoints" / ledger / f"trial-{trial}"

    def trial_dir(self, ledger: str, trial: int) -> Path:
        """AR_TRIAL_DIR of trial number `trial` in the ledger with identity `ledger`."""
        return self.root / "trials" / ledger / f"trial-{trial}"

    def exists(self) -> bool:
        """The campaign has a ledger file (possibly without its study yet: see `ran_before`)."""
        return self.ledger_db.is_file()

    def ran_before(self) -> bool:
        """A runner opened the campaign's ledger once (its `ledger.started` marker or its graph
        checkpoints exist); False also when the first start was killed while making the ledger."""
        return self.ledger_marker.is_file() or self.graph_db.is_file()


def known_campaigns(home: Home = None) -> list[CampaignPaths]:
    """Every campaign with a ledger under the home, by name."""
    root = campaigns_root(home)
    return sorted((CampaignPaths(p.parent) for p in root.glob(f"*/{CampaignPaths(root).ledger_db.name}")),
                  key=lambda p: p.name)  # fmt: skip
