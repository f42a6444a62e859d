"""curate: validate, clean, version and publish text datasets built from plain-text drops."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("curate")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0"
