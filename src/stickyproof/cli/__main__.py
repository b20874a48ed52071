"""``python -m stickyproof.cli``."""

import sys

from . import main

sys.exit(main())
