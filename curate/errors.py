"""The exception every layer raises for a command-line mistake, in a module that imports nothing.

It lives apart from :mod:`curate.ingest.formats.text` (which re-exports it, its historical home) so
that the
command line can name it without importing the parser and, through it, the checks and numpy:
``curate --help`` must stay cheap (``tests/test_startup.py``).
"""

from __future__ import annotations


class UsageError(Exception):
    """A command-line mistake (for example a path that does not exist): exit 2, one line."""
