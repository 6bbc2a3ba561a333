"""` (did you mean 'x'?)`: the one did-you-mean helper of every layer's messages (config check,
skill arguments, chat, steering), here at the bottom so each layer can use it."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def suggest_names(word: str, candidates: Iterable[str]) -> str:
    """` (did you mean 'x'?)` for the closest candidate, or an empty string."""
    close = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""
