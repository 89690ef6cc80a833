"""The site as a reader's browser lays it out: Debian's Chromium, headless, at 1280 px, opens
the front page and the CLI reference from a local server, takes a screenshot of each, and a
script in the page measures every code block. A block that is wider than its column (it
scrolls sideways) or whose text runs under its copy button fails (as the install block cut off
under the copy button, and every usage block scrolling sideways, did).

No browser is downloaded: the test skips, saying so, where the ``chromium`` package is missing
(.ci/run installs it)."""

from __future__ import annotations

import functools
import html
import json
import re
import shutil
import struct
import subprocess
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

WIDTH = 1280
PAGES = {"front": "", "cli-reference": "cli-reference/"}

#: Runs in the page once it has loaded (and Material's script has added the copy buttons):
#: per code block, how far its content is wider than the block or the block than the content
#: column, and how many characters lie under its copy button; written into the page as JSON.
MEASURE = """
window.addEventListener("load", function () { setTimeout(function () {
  var column = (document.querySelector(".md-content__inner") || document.body)
    .getBoundingClientRect();
  var blocks = [];
  document.querySelectorAll(".md-content pre").forEach(function (pre) {
    var code = pre.querySelector("code") || pre, box = pre.getBoundingClientRect();
    var wider = Math.max(code.scrollWidth - code.clientWidth, pre.scrollWidth - pre.clientWidth,
                         box.right - column.right);
    var button = pre.querySelector(".md-code__nav, .md-clipboard"), under = 0;
    if (button) {
      var b = button.getBoundingClientRect(), range = document.createRange();
      var walk = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
      for (var node = walk.nextNode(); node; node = walk.nextNode()) {
        for (var k = 0; k < node.length; k++) {
          if (/\\s/.test(node.data[k])) continue;
          range.setStart(node, k); range.setEnd(node, k + 1);
          var c = range.getBoundingClientRect();
          if (c.right > b.left && c.left < b.right && c.bottom > b.top && c.top < b.bottom) under++;
        }
      }
    }
    blocks.push({start: code.textContent.slice(0, 60), wider: wider, under: under,
                 button: button !== null});
  });
  var out = document.createElement("pre");
  out.id = "code-fit";
  out.textContent = JSON.stringify({column: column.width, blocks: blocks});
  document.body.appendChild(out);
}, 500); });
"""


def _chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("Debian's chromium is not installed (.ci/run installs it)")


@pytest.fixture(scope="module")
def served(docs_site: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A copy of the site, the measuring script added to the pages under test, served on a
    local port (Material's script, which adds the copy buttons, runs as on a real server)."""
    root = tmp_path_factory.mktemp("served") / "site"
    shutil.copytree(docs_site, root)
    (root / "code-fit.js").write_text(MEASURE)
    for path in PAGES.values():
        page = root / path / "index.html"
        page.write_text(page.read_text().replace(
            "</body>", '<script src="/code-fit.js"></script></body>'))
    handler = functools.partial(_Quiet, directory=str(root))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def _browser(url: str, profile: Path, *mode: str, height: int = 1000) -> str:
    done = subprocess.run(
        [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         f"--user-data-dir={profile}", f"--window-size={WIDTH},{height}",
         "--virtual-time-budget=10000", *mode, url],
        capture_output=True, text=True, timeout=180, check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", path
    return struct.unpack(">II", data[16:24])


@pytest.mark.parametrize("page", PAGES)
def test_every_code_block_fits_its_column_at_1280_px(
    served: str, page: str, tmp_path: Path
) -> None:
    url = served + PAGES[page]
    shot = tmp_path / f"{page}.png"
    _browser(url, tmp_path / "profile", f"--screenshot={shot}", height=1600)
    assert _png_size(shot) == (WIDTH, 1600)
    dom = _browser(url, tmp_path / "profile", "--dump-dom")
    found = re.search(r'<pre id="code-fit">(.*?)</pre>', dom, re.DOTALL)
    assert found is not None, "the measuring script did not run"
    report = json.loads(html.unescape(found.group(1)))
    blocks = report["blocks"]
    assert 500 < report["column"] < WIDTH and blocks
    assert all(b["button"] for b in blocks)  # Material's copy buttons are there to measure
    wider = [(b["start"], b["wider"]) for b in blocks if b["wider"] > 0.5]
    assert wider == [], f"code blocks wider than the {report['column']} px column"
    under = [(b["start"], b["under"]) for b in blocks if b["under"]]
    assert under == [], "characters under the copy button"
