""""Did you mean": the known words nearest a mistyped one, for the command line's usage errors
(a command, a choice, a flag) and the API's ``KeyError`` for a tensor name."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["did_you_mean", "nearest"]


def nearest(word: str, known: Iterable[str], n: int = 1) -> list[str]:
    """Up to ``n`` of ``known`` closest to ``word``, closest first (difflib's ratio, at least
    0.6); empty when none is close."""
    import difflib

    return difflib.get_close_matches(word, list(known), n=n)


def did_you_mean(word: str, known: Iterable[str], n: int = 1) -> str:
    """``did you mean 'fc0.weight'?`` (or ``'a' or 'b'``) for the nearest of ``known``; ""
    when none is close."""
    close = nearest(word, known, n)
    return f"did you mean {' or '.join(map(repr, close))}?" if close else ""
