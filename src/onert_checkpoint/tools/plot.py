"""Pictures of checkpoints (``onert-ckpt plot``), drawn with matplotlib (the ``[plot]`` extra):
:func:`histograms` of each entry's values, the :func:`change` from one checkpoint to another,
the :func:`trajectory` of a training run; each written atomically as PNG or SVG (by the suffix).

The SVG keeps its text as text (``svg.fonttype: none``), and each bar, line and histogram panel
has an id (``bar-<tensor>``, ``line-<tensor>``, ``hist-<tensor>-<slot>``; names read from a
file made ``safe_text``: XML holds no control byte), so that a picture can be read back, as the
tests do. Without matplotlib, :func:`require_matplotlib` raises ImportError naming the extra.
"""

from __future__ import annotations

import io
import math
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..format.model import Checkpoint
from .diff import diff
from .render import counted, safe_text
from .stats import checkpoint_entries, entry_stats, histogram

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["FORMATS", "MAX_PANELS", "change", "histograms", "require_matplotlib", "trajectory"]

#: The picture formats, by the output name's suffix.
FORMATS = {".png": "png", ".svg": "svg"}
#: Histogram panels one picture holds at most (choose tensors for more).
MAX_PANELS = 64
#: Bars of a change picture, lines of a trajectory at most: those of the largest changes
#: (the picture's title says how many of how many), so that 10,000 tensors cost no more.
MAX_BARS, MAX_LINES = 64, 32
BINS = 50


def _largest(values: dict[str, float], limit: int) -> dict[str, float]:
    """The ``limit`` entries of ``values`` with the largest values, in their order."""
    if len(values) <= limit:
        return values
    keep = set(sorted(values, key=values.__getitem__, reverse=True)[:limit])
    return {k: v for k, v in values.items() if k in keep}


def _edges(lo: float, hi: float) -> tuple[np.ndarray, float]:
    """(BINS + 1 increasing bin edges from ``lo`` to ``hi``, finite whatever their span; the
    power of two they are drawn divided by, so that no axis length overflows)."""
    big = float(np.finfo(np.float64).max)
    if lo == hi:  # one value: a bin around it, wide enough to be seen at its magnitude
        pad = max(0.5, abs(lo) * 2.0 ** -20)
        lo, hi = max(lo - pad, -big), min(hi + pad, big)
    t = np.linspace(0.0, 1.0, BINS + 1)
    edges = np.maximum.accumulate(lo * (1 - t) + hi * t)  # never hi - lo: it may overflow
    top = int(np.frexp(max(abs(lo), abs(hi)))[1])
    return edges, 2.0 ** (top - 1) if top > 500 else 1.0


def require_matplotlib() -> type[Figure]:
    """matplotlib's Figure; ImportError naming the ``[plot]`` extra when it is not installed."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError("plotting needs matplotlib: pip install "
                          "'onert-checkpoint[plot]'") from None
    return Figure


def _key(name: str | None, index: int) -> str:
    return str(index) if name is None else name


def _label(text: str) -> str:
    """A name read from a file as text on the picture: no control byte, and a ``$`` drawn as
    itself, not the start of matplotlib's math mode."""
    return safe_text(text).replace("$", r"\$")


def _write(fig: Figure, path: str | os.PathLike[str]) -> None:
    from matplotlib import rc_context

    from ..atomic_file import write_atomic

    kind = FORMATS[os.path.splitext(os.fspath(path))[1].lower()]
    buf = io.BytesIO()
    # text as text, ids without randomness, no date: the same checkpoints give the same file
    with rc_context({"svg.fonttype": "none", "svg.hashsalt": "onert-ckpt"}):
        fig.savefig(buf, format=kind, metadata={"Date": None} if kind == "svg" else None)
    write_atomic(path, buf.getbuffer())


def histograms(ckpt: Checkpoint, path: str | os.PathLike[str], *,
               tensors: Sequence[str] | None = None, slot: str | None = None) -> str:
    """One histogram panel per tensor (``tensors``: their names or indices; default all) and
    slot (``slot``: one of them; default weights and every optimizer slot); returns what the
    picture shows, in a line. ValueError for more than :data:`MAX_PANELS` panels or none."""
    Figure = require_matplotlib()
    ckpt.verify()
    chosen = [(entry, dtype, _key(name, entry.index), s)
              for entry, dtype, name, s in checkpoint_entries(ckpt)
              if (tensors is None or _key(name, entry.index) in tensors) and slot in (None, s)]
    if not chosen or len(chosen) > MAX_PANELS:
        raise ValueError(f"{len(chosen)} panels: a picture holds 1 to {MAX_PANELS} (choose "
                         "tensors or a slot)")
    cols = min(4, len(chosen))
    rows = math.ceil(len(chosen) / cols)
    fig = Figure(figsize=(3.2 * cols, 2.4 * rows), layout="constrained")
    for k, (entry, dtype, key, s) in enumerate(chosen):
        ax = fig.add_subplot(rows, cols, k + 1)
        st = entry_stats(entry, dtype)
        edges, unit = (_edges(0.0, 1.0) if st.min is None or st.max is None
                       else _edges(st.min, st.max))
        counts = histogram(entry, dtype, edges)
        shown = edges / unit
        ax.bar(shown[:-1], counts, width=np.diff(shown), align="edge")
        ax.set_gid(safe_text(f"hist-{key}-{s}"))
        scaled = "" if unit == 1.0 else f" (x 2^{int(np.log2(unit))})"
        ax.set_title(_label(f"{key} {s}") + scaled, fontsize=9)
        ax.tick_params(labelsize=7)
    fig.supxlabel("value")
    fig.supylabel("count")
    _write(fig, path)
    slots = ", ".join(dict.fromkeys(s for *_, s in chosen))
    return (f"histograms of {counted(len({key for _, _, key, _ in chosen}), 'tensor')} "
            f"({slots}), {counted(len(chosen), 'panel')} of {BINS} bins")


def _of(shown: int, total: int, which: str) -> str:
    """How many of how many tensors a picture draws."""
    return "one per tensor" if shown == total else f"{which} of {total} tensors"


def _changes(a: Checkpoint, b: Checkpoint, slot: str) -> dict[str, float]:
    """tensor -> relative L2 change of its ``slot`` entry, for entries both hold alike."""
    return {e.key: e.rel_l2 for e in diff(a, b).entries
            if e.slot == slot and e.rel_l2 is not None}


def change(a: Checkpoint, b: Checkpoint, path: str | os.PathLike[str], *,
           slot: str = "weights", labels: tuple[str, str] = ("A", "B")) -> str:
    """A bar per tensor: the relative L2 change of its ``slot`` entry from ``a`` to ``b``
    (an infinite one, where A is zero, drawn above the others in red, marked ``inf``), at
    most :data:`MAX_BARS` (the largest); returns what the picture shows, in a line.
    ValueError when no entry of that slot pairs up."""
    Figure = require_matplotlib()
    every = _changes(a, b, slot)
    if not every:
        raise ValueError(f"no {slot} entry of the two checkpoints pairs up with another")
    values = _largest(every, MAX_BARS)
    fig = Figure(figsize=(max(6.0, 0.4 * len(values)), 4.0), layout="constrained")
    ax = fig.add_subplot()
    top = max((v for v in values.values() if math.isfinite(v)), default=1.0) or 1.0
    for x, (key, value) in enumerate(values.items()):
        shown = value if math.isfinite(value) else top * 1.1  # infinite: A was zero
        (bar,) = ax.bar([x], [shown], color="C0" if math.isfinite(value) else "C3")
        bar.set_gid(safe_text(f"bar-{key}"))
        if not math.isfinite(value):
            ax.annotate("inf", (x, shown), ha="center", va="bottom", fontsize=8)
    ax.set_xticks(range(len(values)), [_label(k) for k in values],
                  rotation=90 if len(values) > 8 else 0, fontsize=8)
    ax.set_xlabel("tensor")
    ax.set_ylabel(_label(f"relative L2 change ({slot})"))
    some = "" if len(values) == len(every) else f" ({len(values)} largest of {len(every)})"
    fig.suptitle(_label(f"{labels[0]} -> {labels[1]}") + some, fontsize=9)
    _write(fig, path)
    return (f"change {labels[0]} -> {labels[1]}: {counted(len(values), 'bar')} "
            f"({_of(len(values), len(every), 'the largest')}), relative L2 change of {slot}")


def trajectory(ckpts: Sequence[Checkpoint], path: str | os.PathLike[str], *,
               slot: str = "weights") -> str:
    """A line per tensor over ``ckpts`` (a training run, in order): the relative L2 change of
    its ``slot`` entry from the first checkpoint, against the step (the checkpoints' ``step``
    when each has one, else their position), at most :data:`MAX_LINES` (those that end
    farthest); returns what the picture shows, in a line."""
    Figure = require_matplotlib()
    if len(ckpts) < 2:
        raise ValueError("a trajectory needs two checkpoints or more")
    steps = [c.state.get("step") for c in ckpts]
    by_step = all(isinstance(s, int) for s in steps)
    xs = [s if by_step and isinstance(s, int) else k for k, s in enumerate(steps)]
    lines: dict[str, list[float]] = {}
    for k, later in enumerate(ckpts[1:], start=1):
        for key, value in _changes(ckpts[0], later, slot).items():
            if len(lines.setdefault(key, [0.0])) == k:  # paired in every checkpoint so far
                lines[key].append(value)
    lines = {key: ys for key, ys in lines.items() if len(ys) == len(ckpts)}
    if not lines:
        raise ValueError(f"no {slot} entry pairs up in every checkpoint")
    drawn = _largest({key: ys[-1] for key, ys in lines.items()}, MAX_LINES)
    every = len(lines)
    lines = {key: lines[key] for key in drawn}
    fig = Figure(figsize=(7.0, 4.2), layout="constrained")
    ax = fig.add_subplot()
    for key, ys in lines.items():
        (line,) = ax.plot(xs, ys, marker="o", label=_label(key))
        line.set_gid(safe_text(f"line-{key}"))
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # steps are whole numbers
    ax.set_xlabel("step" if by_step else "checkpoint")
    ax.set_ylabel(_label(f"relative L2 change from the first ({slot})"))
    some = f"{len(lines)} of {every} tensors: those that end farthest"
    ax.set_title(some if len(lines) < every else "", fontsize=9)
    if len(lines) <= 16:
        ax.legend(fontsize=8)
    _write(fig, path)
    span = f" (steps {xs[0]} to {xs[-1]})" if by_step else ""
    return (f"trajectory over {len(ckpts)} checkpoints{span}: "
            f"{counted(len(lines), 'line')} ({_of(len(lines), every, 'those that end farthest')}),"
            f" relative L2 change of {slot} from the first")
