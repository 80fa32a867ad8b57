"""`python -m torchscope ARGS` runs the `torchscope` command installed with this package.

pip puts the native `torchscope` in the environment's scripts folder (the wheel's record names it); a
`cmake --install` tree has it in <prefix>/bin, four folders above this file (share/torchscope/python/torchscope).
"""

import os
import sys
from importlib import metadata
from pathlib import Path


def _from_wheel():
    try:
        files = metadata.files("torchscope") or []
    except metadata.PackageNotFoundError:
        return None
    for entry in files:
        if entry.name == "torchscope" and entry.parent.name == "bin":
            return Path(entry.locate())
    return None


def find_executable():
    """The torchscope executable of this installation, or None."""
    for candidate in (_from_wheel(), Path(os.path.abspath(__file__)).parents[4] / "bin" / "torchscope"):
        if candidate is not None and os.access(candidate, os.X_OK):
            return candidate
    return None


def main():
    executable = find_executable()
    if executable is None:
        sys.exit("torchscope: the torchscope executable of this installation was not found")
    os.execv(executable, [str(executable), *sys.argv[1:]])


if __name__ == "__main__":
    main()
