"""The exceptions every layer raises for the command line to name, in a module that imports
nothing, so that the command line can name them without importing the parser, numpy or the
process pool: ``curate --help`` must stay cheap (``tests/cli/test_startup.py``)."""

from __future__ import annotations


class UsageError(Exception):
    """A command-line mistake (for example a path that does not exist): exit 2, one line."""


class StorageError(UsageError, OSError):
    """Storage that cannot be reached or listed at all (no such bucket, access denied, wrong
    credentials): one line, exit 2, since the URI or the credentials given are wrong. An
    ``OSError`` too, so that a reader that meets it on one object makes it a finding at that
    file, as it does a local file it cannot read."""


class WorkerDied(RuntimeError):
    """A worker of the engine died mid-task (the out-of-memory killer, a lost node): exit 3,
    one line; nothing was written."""


class ReleaseError(Exception):
    """A release that cannot be read, or a version that cannot be used: exit 1."""


class ReleaseUsageError(ReleaseError):
    """The reference itself is wrong (no such path, malformed ``hub:`` reference): exit 2."""


class NoPreviousRelease(ReleaseError):
    """The Hub repository does not exist or has no ``vX.Y.Z`` tag yet."""


class HubError(Exception):
    """A Hub operation that failed for good: exit 1; the message is one line and never holds a
    token."""


class HubAuthError(HubError):
    """The Hub refused the credentials (401) or the permission (403)."""


class HubSettingsError(HubError):
    """``CURATE_HUB_TIMEOUT`` or ``CURATE_HUB_DEADLINE`` is not a positive number: usage: exit 2."""


class OutOfTime(HubError):
    """The operation's deadline passed before a request could be made."""
