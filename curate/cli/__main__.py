"""``python -m curate.cli``: the ``curate`` command."""

import sys

from curate.cli import main

sys.exit(main())
