"""``python -m twinnet``: the command line, as the ``twinnet`` console script runs it."""

import sys

from twinnet.cli.main import main

sys.exit(main())
