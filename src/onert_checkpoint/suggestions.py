""""Did you mean": the known words nearest a mistyped one, for the command line's usage errors
(a command, a choice, a flag) and the API's ``KeyError`` for a tensor name."""

from __future__ import annotations

import heapq
from collections.abc import Iterable

__all__ = ["did_you_mean", "nearest"]

#: Past this many known words, difflib compares only those sharing the longest start and end
#: (a typo leaves both mostly intact): 100,000 tensor names take a fraction of a second.
SHORTLIST = 200


def _shared_ends(word: str, other: str) -> int:
    """How many characters ``other`` shares with ``word`` at its start and at its end."""
    n = min(len(word), len(other))
    i = 0
    while i < n and word[i] == other[i]:
        i += 1
    j = 0
    while j < n - i and word[-1 - j] == other[-1 - j]:
        j += 1
    return i + j


def nearest(word: str, known: Iterable[str], n: int = 1) -> list[str]:
    """Up to ``n`` of ``known`` closest to ``word``, closest first (difflib's ratio, at least
    0.6, or 0.5 for a word of two characters, whose one typo leaves half of it); empty when
    none is close."""
    import difflib

    words = list(known)
    if len(words) > SHORTLIST:
        words = heapq.nlargest(SHORTLIST, words, key=lambda w: _shared_ends(word, w))
    return difflib.get_close_matches(word, words, n=n, cutoff=0.5 if len(word) <= 2 else 0.6)


def did_you_mean(word: str, known: Iterable[str], n: int = 1) -> str:
    """``did you mean 'fc0.weight'?`` (or ``'a' or 'b'``) for the nearest of ``known``; ""
    when none is close."""
    close = nearest(word, known, n)
    return f"did you mean {' or '.join(map(repr, close))}?" if close else ""
