"""``policies``: what is registered, the models each serves, each option's default and meaning.

Defaults are printed as ``--set`` reads them (quoted for a shell), so they can be pasted back.
"""

from __future__ import annotations

import argparse
import inspect
import shlex
import shutil
import textwrap

HELP_COLUMN = 32
"""Where option help starts, as in argparse's layout; longer ``--set`` texts push it below."""


def register(parser: argparse.ArgumentParser) -> None:
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from plugins.contract.option_pairs import option_text
    from plugins.contract.registry import MODELS, available

    width = shutil.get_terminal_size().columns
    print("models (a policy acts only in the models it serves):")
    for model, what in MODELS.items():
        print(_row(model, what, width))
    for name, cls in sorted(available().items()):
        where = "replay or twin" if "campus" in cls.SERVES else "replay only"  # (config_policy)
        oracle = f"  [oracle: {where}]" if cls.NEEDS_ORACLE else ""
        models = ", ".join(sorted(cls.SERVES))
        print(f"\n{name}  (version {cls.VERSION}; models: {models}){oracle}")
        print(_wrap(first_paragraph(cls.__doc__), width, "    "))
        for key, opt in cls.OPTIONS.items():
            default = shlex.quote(option_text(opt.default))  # an empty map as ''
            print(_row(f"--set {key}={default}", opt.help, width))
    return 0


def first_paragraph(doc: str | None) -> str:
    """A docstring's first paragraph as one line (the summary, never cut mid-sentence)."""
    return " ".join(inspect.cleandoc(doc or "").split("\n\n")[0].split())


def _wrap(text: str, width: int, first: str, rest: str | None = None) -> str:
    return textwrap.fill(
        text,
        width,
        initial_indent=first,
        subsequent_indent=first if rest is None else rest,
        break_long_words=False,
        break_on_hyphens=False,
    )


def _row(label: str, text: str, width: int) -> str:
    """``label`` with ``text`` wrapped in a column of its own to its right, or below it."""
    head, pad = f"    {label}", " " * HELP_COLUMN
    if len(head) + 2 > HELP_COLUMN:
        return f"{head}\n{_wrap(text, width, pad)}"
    return _wrap(text, width, head.ljust(HELP_COLUMN), pad)
