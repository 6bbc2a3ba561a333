"""The one error of code patches."""


class PatchError(Exception):
    """A patch that cannot be used; the message says why and what to send instead."""
