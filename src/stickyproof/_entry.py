"""The ``stickyproof`` console script, ``python -m stickyproof`` and ``python -m stickyproof.cli``.

The command line (``stickyproof.cli``) imports every command module, a quarter of a second: a
Ctrl-C pressed in that time would print a ``KeyboardInterrupt`` traceback, since ``cli.main``'s own
handling (exit 130 and one line, ``cli/interrupts.py``) is not running yet. This module imports it under that rule.
"""

from __future__ import annotations

import sys


def main() -> int:
    try:
        from .cli import main as run
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return 130
    return run()
