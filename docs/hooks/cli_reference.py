"""MkDocs hook: the CLI reference page is written from the argparse definitions at build time,
so it cannot drift from the command line (`onert_checkpoint.tools.cli.build_parser`)."""

from __future__ import annotations

import argparse
import os

MARKER = "<!-- cli-reference -->"


#: the help's width: what a code block of the site's content column holds at 1280 px
#: (tests/project/test_docs_browser.py measures that none is wider than its column)
COLUMNS = "76"


def _help(parser: argparse.ArgumentParser) -> str:
    os.environ["COLUMNS"] = COLUMNS
    return parser.format_help().rstrip()


def render() -> str:
    from onert_checkpoint.tools.cli import build_parser

    parser = build_parser()
    parts = ["## onert-ckpt", "", "```text", _help(parser), "```", ""]
    for action in parser._subparsers._group_actions:
        for name, sub in action.choices.items():
            parts += [f"## onert-ckpt {name}", "", "```text", _help(sub), "```", ""]
    return "\n".join(parts)


def on_page_markdown(markdown: str, page, config, files) -> str:
    if MARKER in markdown:
        return markdown.replace(MARKER, render())
    return markdown
