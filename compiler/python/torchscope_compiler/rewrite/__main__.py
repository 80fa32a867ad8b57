"""The command line of the source fixes: python -m torchscope_compiler.rewrite (see the package's docstring)."""

from __future__ import annotations

import argparse
import os
import sys

import libcst as cst

from . import SOURCE_FIXES, rewrite_source, unified_diff

# Fixes that rewrite only the lines their findings name, and say so when called without them.
NEEDS_LOCATION = {
    "remove-data-dependent-branch": "the branch's FILE:LINE (the finding's location)",
    "item-kept-as-tensor": "the FILE:LINE of the `.item()` or `.tolist()` (the finding's location)",
}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m torchscope_compiler.rewrite")
    parser.add_argument("--fix", default="", help="comma-separated fix ids, each ID or ID:ARG")
    parser.add_argument("--root", default=".", help="diff paths are relative to this folder")
    parser.add_argument("--in-place", action="store_true", help="write the changed files")
    parser.add_argument("--list", action="store_true", help="print the source fix ids")
    parser.add_argument("files", nargs="*")
    args = parser.parse_args(argv)
    if args.list:
        print("\n".join(SOURCE_FIXES))
        return 0
    from torchscope_compiler.runtime import parse

    fixes = [(i, a) for i, a in parse(args.fix) if i in SOURCE_FIXES]
    unknown = [i for i, _ in parse(args.fix) if i not in SOURCE_FIXES]
    if unknown and not fixes:
        print(f"rewrite: no source form for fix '{unknown[0]}'", file=sys.stderr)
        return 2
    for fix_id, arg in fixes:
        if fix_id in NEEDS_LOCATION and not arg:
            print(f"rewrite: {fix_id} needs {NEEDS_LOCATION[fix_id]}; nothing changed", file=sys.stderr)
    for path in args.files:
        notes: list[str] = []
        try:
            with open(path, encoding="utf-8") as handle:
                old = handle.read()
            new = rewrite_source(old, fixes, os.path.relpath(path, args.root), os.path.abspath(path), notes)
        except (OSError, UnicodeDecodeError, cst.ParserSyntaxError) as error:
            print(f"rewrite: {path} skipped: {str(error).splitlines()[0] if str(error) else error}", file=sys.stderr)
            continue
        for note in notes:
            print(f"rewrite: {note}", file=sys.stderr)
        if new == old:
            continue
        sys.stdout.write(unified_diff(old, new, os.path.relpath(path, args.root)))
        if args.in_place:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(new)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
