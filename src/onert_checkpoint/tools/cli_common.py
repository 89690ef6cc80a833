"""What the command modules of ``onert-ckpt`` share: the exit statuses, the error reported as
one line, the model and paths a command is given, and the options several commands take;
:mod:`.jobs_cli` and :mod:`.conformance` import them without :mod:`.cli`, which reports errors."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from .render import safe_text

if TYPE_CHECKING:
    from ..format.model import Checkpoint

__all__ = ["DIALECTS", "EXIT_INVALID", "EXIT_OK", "EXIT_USAGE", "ORDER_CHOICES",
           "PROGRESS_THRESHOLD", "CliError", "batch_size_option", "command_model", "count_arg",
           "given_path", "load_model", "lost_in_write", "model_option", "order_option",
           "progress_bar", "require_model", "warn_dropped"]

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2


class CliError(Exception):
    """A failure the command line reports as one line: ``code`` and exit status."""

    def __init__(self, code: str, message: str, status: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.code = code
        self.status = status


def load_model(path: str | None) -> Any:
    """The circle model at ``path`` (None without ``--model``). A file that cannot be read is
    an I/O error (exit 2) like a missing checkpoint; one that is not a circle model is
    model_mismatch (exit 1)."""
    if path is None:
        return None
    from ..circle.model import CircleModel

    return CircleModel.load(given_path(path, "model"))  # a large model mapped, not copied


def command_model(args: argparse.Namespace, *checkpoints: str) -> Any:
    """The command's circle model: ``--model``, else ``<checkpoint name>.circle`` beside the
    checkpoint, else ``$ONERT_CKPT_MODEL`` (:mod:`.model_lookup`); None when there is none.
    Which one is kept in ``args.model_choice`` (``info`` prints it; errors name it)."""
    from .model_lookup import find_model

    given = getattr(args, "model", None)
    no_model = getattr(args, "no_model", False)
    if no_model and given is not None:
        raise CliError("usage_error", "--model and --no-model exclude each other")
    args.model_choice = choice = None if no_model else find_model(given, *checkpoints)
    return None if choice is None else load_model(choice.path)


def given_path(path: str, what: str = "output") -> str:
    """``path``; the empty path is a usage error (exit 2) naming whose it is (``what``)."""
    if path == "":
        raise CliError("usage_error", f"the {what} path is empty")
    return path


def count_arg(text: str) -> int:
    """A whole number, 1 or more (``--batch-size``, ``--jobs``, ``--max-output``)."""
    try:
        value = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {value}")
    return value


def require_model(ckpt: Checkpoint, path: str, to: str, dialect: str | None, model: Any) -> None:
    """``model_required`` (exit 2) when writing ``ckpt`` as ``to`` in ``dialect`` re-indexes
    its entries, which only the circle model can do, and there is no ``model``."""
    from ..format.convert import indexing_text, needs_model
    from ..format.revisions import registry

    if model is not None or not needs_model(ckpt, to, dialect):
        return
    by_index = registry.holds(to, "keyed_by") == registry.BY_CIRCLE_INDEX
    target = "WOF (circle tensor indices)" if by_index else f"the {dialect} dialect"
    raise CliError("model_required", f"{safe_text(path)}: writing {indexing_text(ckpt)} in "
                   f"{target} needs the circle model to index them: add --model MODEL.circle")


def lost_in_write(ckpt: Checkpoint, revision: str | None, allow_lossy: bool,
                  written: Checkpoint | None = None) -> list[str]:
    """What writing ``ckpt`` as ``revision`` drops when ``--allow-lossy`` lets it (else the
    write refuses, naming it), said on stderr after the write. The tensor names, dtypes, shapes
    and model indices ``written`` (the checkpoint as written) carries again are not lost: its
    model restores them (format/loss.py's ``model_restores``, which the refusal follows too)."""
    if not allow_lossy:
        return []
    from ..format.loss import check_lossless

    def annotations(c: Checkpoint) -> set[tuple[Any, ...]]:
        return {(t.name, t.dtype, None if t.shape is None else tuple(t.shape), t.model_index)
                for t in c.tensors}

    restored = written is not None and annotations(ckpt) <= annotations(written)
    return check_lossless(ckpt, revision, allow_lossy=True, model_restores=restored)


def warn_dropped(dropped: list[str]) -> None:
    """One stderr line per kind of content an ``--allow-lossy`` write dropped."""
    for what in dropped:
        print(f"onert-ckpt: warning: not_representable: dropped {safe_text(what)} "
              "(--allow-lossy)", file=sys.stderr)


#: Files over this size get a progress bar while written (when stderr is a terminal).
PROGRESS_THRESHOLD = 64 << 20


@contextlib.contextmanager
def progress_bar(size_hint: int, desc: str = "writing") -> Iterator[Callable[[int], object] | None]:
    """A callback feeding a tqdm bar (titled ``desc``) the bytes written or compared, for files
    of more than :data:`PROGRESS_THRESHOLD` bytes while stderr is a terminal; else None. The bar
    starts at the first byte: the checks and checksums ahead of it (which may take as long as
    the work) would make the first rate tiny and its estimate absurd."""
    if not (size_hint > PROGRESS_THRESHOLD and sys.stderr.isatty()):
        yield None
        return
    from tqdm import tqdm

    bars: list[Any] = []

    def tick(n: int) -> None:
        if not bars:
            bars.append(tqdm(total=size_hint, unit="B", unit_scale=True, desc=desc,
                             leave=False, file=getattr(sys.stderr, "raw", sys.stderr)))
        bar = bars[0]
        if bar.n + n > bar.total:  # an export a little larger than its input: a full bar
            bar.total = bar.n + n
        bar.update(n)  # the bar's own \r: written raw, not escaped

    try:
        yield tick
    finally:
        if bars:
            bars[0].close()


#: ``--order``'s choices: circle.binding.ORDER_SOURCES (not imported: start-up time).
ORDER_CHOICES = ("auto", "probe", "predict", "size")


#: ``--dialect``'s choices: the schema-1 dialects.
DIALECTS = ("onert", "onert-micro")


def model_option(p: argparse.ArgumentParser, what: str) -> None:
    """``--model`` (found by the convention when not given, :mod:`.model_lookup`),
    ``--no-model`` and ``--order``."""
    p.add_argument("--model", metavar="MODEL.circle", help=what + " (default: <checkpoint "
                   "name>.circle beside the checkpoint, else $ONERT_CKPT_MODEL)")
    p.add_argument("--no-model", action="store_true",
                   help="read without a model, even when the convention finds one")
    order_option(p)


def batch_size_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--batch-size", type=count_arg, metavar="B",
                   help="batch size of the run, to rescale Adam's m (x B) and v (x B^2) "
                   "moving to onert-micro, or divide them moving to onert; needed for "
                   "non-zero Adam state crossing dialects (convert --to v3 records it)")


def order_option(p: argparse.ArgumentParser) -> None:
    """``--order``: how an onert file's entries are matched to the model's tensors."""
    p.add_argument("--order", choices=ORDER_CHOICES, default="auto",
                   help="how an onert file's entries are matched to the model's tensors: "
                   "predict (from the model alone), probe (ask the onert runtime; the answer "
                   "is cached per model), size (entry sizes), or auto: predict, the probe "
                   "only where the prediction does not fit, then size (auto)")
