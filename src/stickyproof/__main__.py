"""``python -m stickyproof``: the ``stickyproof`` command without an installed entry point."""

import sys

from ._entry import main

sys.exit(main())
