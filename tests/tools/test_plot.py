"""``onert-ckpt plot``: the pictures show what the checkpoints hold.

Each test runs the real command (``python -m onert_checkpoint plot``) on the real onert exports
of tests/data/real-onert, then reads the picture back: the SVG's elements (its text is text,
each bar and line has an id, tools/plot.py) measured against NumPy's own figures, the PNG's
pixels. Skips where matplotlib (the ``[plot]`` extra) is missing, except the test of that case.
"""

from __future__ import annotations

import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

import onert_checkpoint as oc

DATA = Path(__file__).parents[1] / "data" / "real-onert"
FC3 = DATA / "fc3.circle"
ADAM, SGD = DATA / "fc3-adam-step12.ckpt", DATA / "fc3-sgd-step12.ckpt"
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(autouse=True)
def _matplotlib(request: pytest.FixtureRequest) -> None:
    if "without_matplotlib" not in request.node.name:
        pytest.importorskip("matplotlib", reason="the [plot] extra (matplotlib) is missing")


def run(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "onert_checkpoint", *map(str, args)],
                          capture_output=True, text=True, timeout=300, check=False)


def plotted(*args: object) -> ET.Element:
    done = run("plot", *args)
    assert done.returncode == 0 and done.stdout.startswith("wrote "), done.stderr
    return ET.parse(str(args[-1])).getroot()


def groups(root: ET.Element, prefix: str) -> dict[str, ET.Element]:
    return {g.get("id", "")[len(prefix):]: g for g in root.iter(f"{SVG}g")
            if g.get("id", "").startswith(prefix)}


def texts(root: ET.Element) -> list[str]:
    return [t.text.strip() for t in root.iter(f"{SVG}text") if t.text]


def ys(path: ET.Element) -> list[float]:
    """The y coordinates of an SVG path's points (``M x y L x y ...``)."""
    return [float(y) for _, y in re.findall(r"[ML] ([-\d.]+) ([-\d.]+)", path.get("d", ""))]


def height(g: ET.Element) -> float:
    values = ys(next(g.iter(f"{SVG}path")))
    return max(values) - min(values)


def rel_l2(a: np.ndarray, b: np.ndarray) -> float:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.linalg.norm(b - a) / np.linalg.norm(a))


def test_change_draws_one_bar_per_tensor_as_tall_as_its_relative_change(tmp_path: Path) -> None:
    root = plotted("--model", FC3, SGD, ADAM, tmp_path / "change.svg")
    a, b = oc.load(SGD, model=FC3), oc.load(ADAM, model=FC3)
    expected = {t.name: rel_l2(t.data, b[t.name].data) for t in a.tensors}
    bars = groups(root, "bar-")
    assert list(bars) == [t.name for t in a.tensors]  # one bar per tensor, in the file's order
    tallest = max(expected, key=expected.__getitem__)
    for name, g in bars.items():  # heights in proportion to the relative change
        assert height(g) / height(bars[tallest]) == pytest.approx(
            expected[name] / expected[tallest], rel=1e-4)
    shown = texts(root)
    assert set(expected) <= set(shown)  # the tick labels name the tensors
    assert "relative L2 change (weights)" in shown and "tensor" in shown
    assert len(groups(root, "axes_")) == 1


def test_hist_draws_a_panel_per_tensor_and_slot_with_numpy_s_counts(tmp_path: Path) -> None:
    root = plotted("--model", FC3, ADAM, tmp_path / "hist.svg")
    ckpt = oc.load(ADAM, model=FC3)
    panels = groups(root, "hist-")
    assert list(panels) == [f"{t.name}-{s}" for t in ckpt.tensors for s in ("weights", "m", "v")]
    w1 = np.asarray(ckpt["w1"].data, np.float64).reshape(-1)
    counts, _ = np.histogram(w1, bins=np.linspace(w1.min(), w1.max(), 51))
    children = [g.get("id", "") for g in panels["w1-weights"]]
    # the panel's background, its bars, then its axes (and after them the frame's four sides)
    axis = next(k for k, c in enumerate(children) if c.startswith("matplotlib.axis"))
    bars = list(panels["w1-weights"])[1:axis]
    drawn = [height(g) for g in bars]
    assert len(drawn) == 50
    assert np.allclose(np.array(drawn) / max(drawn), counts / counts.max(), atol=1e-4)
    assert "w1 weights" in texts(root) and "value" in texts(root) and "count" in texts(root)
    only = plotted("--model", FC3, "--tensor", "w1", "--slot", "m", ADAM, tmp_path / "w1.svg")
    assert list(groups(only, "hist-")) == ["w1-m"]


def test_trajectory_draws_a_line_per_tensor_over_the_steps(tmp_path: Path) -> None:
    """A run of three checkpoints: fc2 at step 8, then w0 moved further at steps 9 and 10."""
    model = DATA / "fc2.circle"
    first = DATA / "fc2-adam-step8.ckpt"
    w0 = np.array(oc.load(first, model=model)["w0"].data)
    run_files = [first]
    for step, by in ((9, 0.1), (10, 0.3)):
        np.save(tmp_path / "w0.npy", w0 + np.float32(by))
        out = tmp_path / f"step{step}.ckpt"
        done = run("edit", first, out, "--model", model, "--step", step,
                   "--replace", f"w0={tmp_path / 'w0.npy'}")
        assert done.returncode == 0, done.stderr
        run_files.append(out)
    root = plotted("--model", model, *run_files, tmp_path / "run.svg")
    lines = groups(root, "line-")
    assert list(lines) == ["w0", "b0", "w1", "b1"]
    w0_y = ys(next(lines["w0"].iter(f"{SVG}path")))
    assert len(w0_y) == 3 and w0_y[0] > w0_y[1] > w0_y[2]  # up the picture: further away
    expected = [rel_l2(w0, w0 + np.float32(by)) for by in (0.1, 0.3)]
    assert (w0_y[0] - w0_y[2]) / (w0_y[0] - w0_y[1]) == pytest.approx(
        expected[1] / expected[0], rel=1e-4)
    flat = ys(next(lines["b0"].iter(f"{SVG}path")))
    assert len(flat) == 3 and len(set(flat)) == 1  # b0 never moved
    assert "step" in texts(root)
    assert {"8", "9", "10"} <= set(texts(root))  # the x axis: the checkpoints' steps


def test_the_wrote_line_says_what_the_picture_shows(tmp_path: Path) -> None:
    """The kind, the tensors, the panels and their bins or the bars or lines, and the path:
    not a bare count ("6 bars")."""
    n = len(oc.load(ADAM).tensors)
    out = tmp_path / "h.svg"
    assert run("plot", "--model", FC3, ADAM, out).stdout == (
        f"wrote {out}: histograms of {n} tensors (weights, m, v), {3 * n} panels of 50 bins\n")
    assert run("plot", "--model", FC3, "--tensor", "w1", "--slot", "m", ADAM, out).stdout == (
        f"wrote {out}: histograms of 1 tensor (m), 1 panel of 50 bins\n")
    out = tmp_path / "c.png"
    assert run("plot", "--model", FC3, SGD, ADAM, out).stdout == (
        f"wrote {out}: change {SGD.name} -> {ADAM.name}: {n} bars (one per tensor), relative L2 "
        "change of weights\n")
    out = tmp_path / "t.svg"
    assert run("plot", "--model", FC3, "--slot", "m", ADAM, ADAM, ADAM, out).stdout == (
        f"wrote {out}: trajectory over 3 checkpoints (steps 12 to 12): {n} lines (one per "
        "tensor), relative L2 change of m from the first\n")


def test_png_is_a_picture_of_the_bars(tmp_path: Path) -> None:
    from PIL import Image

    done = run("plot", "--model", FC3, SGD, ADAM, tmp_path / "change.png")
    assert done.returncode == 0, done.stderr
    with Image.open(tmp_path / "change.png") as img:
        assert img.format == "PNG" and img.width >= 400 and img.height >= 300
        pixels = np.asarray(img.convert("RGB")).reshape(-1, 3)
    blue = np.all(pixels == (0x1F, 0x77, 0xB4), axis=1)  # matplotlib's first colour: the bars
    assert 0.01 < blue.mean() < 0.9


def test_plot_without_matplotlib_names_the_extra(tmp_path: Path) -> None:
    code = ("import sys; sys.modules['matplotlib'] = None; "  # what an absent package does
            "from onert_checkpoint.tools.cli import main; sys.exit(main(sys.argv[1:]))")
    out = tmp_path / "h.svg"
    done = subprocess.run([sys.executable, "-c", code, "plot", str(ADAM), str(out)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 2 and not out.exists()
    assert done.stderr.startswith("onert-ckpt: error: missing_dependency: ")
    assert "pip install 'onert-checkpoint[plot]'" in done.stderr


def test_plot_refuses_other_names_and_file_counts(tmp_path: Path) -> None:
    done = run("plot", ADAM, tmp_path / "h.jpg")
    assert done.returncode == 2 and "unknown_format" in done.stderr and ".svg" in done.stderr
    done = run("plot", "--kind", "change", ADAM, tmp_path / "c.svg")
    assert done.returncode == 2 and "usage_error: --kind change takes 2" in done.stderr
    done = run("plot", "--model", FC3, ADAM, tmp_path / "n.svg", "--tensor", "nope")
    assert done.returncode == 2 and "usage_error: 0 panels" in done.stderr
    assert not list(tmp_path.iterdir())
