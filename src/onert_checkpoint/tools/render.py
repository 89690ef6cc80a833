"""Turning values into safe human text (no terminal control sequences from hostile files).

:func:`safe_text` is the one escaping function of the command line: every string that comes
from a file (tensor and slot names, state keys and values, optimizer kinds, error messages)
goes through it before it is printed, in every command and output mode. :class:`SafeStream`
applies it once more to everything written to stdout and stderr, so that a code path that
forgot it still cannot reach the terminal with a control byte. JSON output is ASCII with
``\\uXXXX`` escapes (:mod:`onert_checkpoint.tools.jsonout`).
"""

from __future__ import annotations

from typing import Any, TextIO

__all__ = ["SafeStream", "counted", "human_size", "safe_text"]


def safe_text(text: str) -> str:
    """``text`` with every non-printable character escaped, so a name read from a file cannot
    inject terminal control sequences (a known bug class of dump tools).

    Escaped: C0 and C1 controls (ESC, so CSI colour and OSC title sequences, NUL, BEL, CR, LF,
    DEL, 0x80-0x9f), format characters such as the bidi overrides U+202A-U+202E and
    U+2066-U+2069 and zero-width characters, line and paragraph separators, surrogates,
    private-use and unassigned code points: ``str.isprintable`` is false for all of them. Each
    becomes its Python escape (``\\x1b``, ``\\u202e``), plain ASCII.

        >>> safe_text("w\\x1b]0;owned\\x07\\u202e\\x00\\x9b")
        'w\\\\x1b]0;owned\\\\x07\\\\u202e\\\\x00\\\\x9b'
    """
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
                   for c in text)


class SafeStream:
    """A text stream that passes every line written to it through :func:`safe_text` (line
    breaks kept): the command line's last guard for stdout and stderr."""

    def __init__(self, raw: TextIO) -> None:
        self.raw = raw

    def write(self, text: str) -> int:
        self.raw.write("\n".join(safe_text(line) for line in text.split("\n")))
        return len(text)

    def __getattr__(self, name: str) -> Any:  # flush, fileno, isatty, encoding, ...
        return getattr(self.raw, name)


def counted(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural unless ``n`` is 1: ``1 tensor``, ``2 tensors``; only the
    noun's last word takes the ``s`` (``3 NaN or infinite values``)."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def human_size(n: int | None) -> str:
    if n is None:
        return "?"
    value = float(n)
    for unit in ("B", "KiB", "MiB"):
        if value < 1024:
            return f"{int(value)} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"
