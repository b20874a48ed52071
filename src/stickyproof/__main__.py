"""``python -m stickyproof``: the ``stickyproof`` command without an installed entry point."""

import sys

from .cli import main

sys.exit(main())
