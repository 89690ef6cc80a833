"""Turning values into safe human text (no terminal control sequences from hostile files)."""

from __future__ import annotations

__all__ = ["human_size", "safe_text"]


def safe_text(text: str) -> str:
    """``text`` with every non-printable character escaped, so a name read from a file cannot
    inject terminal control sequences (a known bug class of dump tools)."""
    return "".join(
        c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text
    )


def human_size(n: int | None) -> str:
    if n is None:
        return "?"
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{int(value)} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} TiB"
