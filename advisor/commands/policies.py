"""``policies``: what is registered, with each option's default and meaning."""

from __future__ import annotations

import argparse

from plugins.contract.registry import available


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("policies", help="list the registered policies and their options")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    for name, cls in sorted(available().items()):
        doc = (cls.__doc__ or "").strip().splitlines()
        oracle = "  [oracle: replay only]" if cls.NEEDS_ORACLE else ""
        print(f"{name}  (version {cls.VERSION}){oracle}")
        if doc:
            print(f"    {doc[0]}")
        for key, opt in cls.OPTIONS.items():
            print(f"    --set {key}=VALUE   default {opt.default!r}: {opt.help}")
    return 0
