"""Steering a running campaign: one typed command vocabulary (`Command`), the inbox it travels
through, the chat overrides it leaves, approval gates and their wait loop, the handlers that
apply commands, and the nightly window.

    from autoresearch.steering import Note, Pause, post
    post("digits-mlp", Pause(reason="checking the data"), author="alice")
    post("digits-mlp", Note(text="try smaller lr"))
"""

from autoresearch.steering.approvals import ApprovalBook, ApprovalRequest, ApprovalStatus, Gate, await_answer
from autoresearch.steering.commands import (
    COMMANDS,
    KINDS,
    SENT_BY_PEOPLE,
    Approve,
    CancelTrial,
    Command,
    CommandError,
    Deny,
    Note,
    Pause,
    Resume,
    SetBudget,
    SetPriority,
    SetSpace,
    Stop,
    TryTrial,
    WindowEnd,
    parse_command,
)
from autoresearch.steering.handlers import (
    HANDLED_KINDS,
    HANDLERS,
    Handler,
    apply_config_change,
    apply_priority,
    drain,
    notes_of,
    restore_steering,
    store_campaign,
)
from autoresearch.steering.inbox import Inbox, InboxError, SteeringMessage, open_inbox, post, read_messages
from autoresearch.steering.overrides import (
    Overrides,
    SteeringError,
    change_budget,
    change_priority,
    change_space,
    describe_spec,
    effective_campaign,
    load_overrides,
    record,
    save_overrides,
)
from autoresearch.steering.target import SteeringTarget
from autoresearch.steering.waiting import wait_for_answer
from autoresearch.steering.window import NIGHTLY_PAUSE, Window, WindowError, window_end

__all__ = [
    "COMMANDS",
    "HANDLED_KINDS",
    "HANDLERS",
    "KINDS",
    "NIGHTLY_PAUSE",
    "SENT_BY_PEOPLE",
    "ApprovalBook",
    "ApprovalRequest",
    "ApprovalStatus",
    "Approve",
    "CancelTrial",
    "Command",
    "CommandError",
    "Deny",
    "Gate",
    "Handler",
    "Inbox",
    "InboxError",
    "Note",
    "Overrides",
    "Pause",
    "Resume",
    "SetBudget",
    "SetPriority",
    "SetSpace",
    "SteeringError",
    "SteeringMessage",
    "SteeringTarget",
    "Stop",
    "TryTrial",
    "Window",
    "WindowEnd",
    "WindowError",
    "apply_config_change",
    "apply_priority",
    "await_answer",
    "change_budget",
    "change_priority",
    "change_space",
    "describe_spec",
    "drain",
    "effective_campaign",
    "load_overrides",
    "notes_of",
    "open_inbox",
    "parse_command",
    "post",
    "read_messages",
    "record",
    "restore_steering",
    "save_overrides",
    "store_campaign",
    "wait_for_answer",
    "window_end",
]
