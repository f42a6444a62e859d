"""The installed curate's version, read without ``importlib.metadata`` where that is safe.

The import packages are ``curate`` and ``validation``; the distribution that installs them is
``curate-datasets`` (:data:`DISTRIBUTION`: ``curate`` on PyPI is another project), so its
metadata is ``curate_datasets-*.dist-info``.

Asked by ``--version``, a build's manifest and the validation cache's fingerprint (so every
warm ``curate validate``). ``importlib.metadata`` costs about as much to import as Python's
own start-up (``email``, ``zipfile``, ``csv``…), so the usual case (one
``curate_datasets-*.dist-info`` folder, as pip and uv install it, editable or not) is read
directly; anything else (an egg, a zip, two candidates in one folder) is left to
``importlib.metadata``.
``tests/cli/test_startup.py`` checks that both give the same answer.
"""

from __future__ import annotations

import functools

DISTRIBUTION = "curate-datasets"
# The name as a dist-info folder spells it: lower case, every run of ``-_.`` as ``_``.
_FOLDER_NAME = DISTRIBUTION.replace("-", "_")


@functools.cache
def version() -> str:
    """The installed distribution's version, as ``importlib.metadata.version`` says."""
    found = _dist_info_version()
    if found is not None:
        return found
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as metadata_version

    try:
        return metadata_version(DISTRIBUTION)
    except PackageNotFoundError:  # running from a source tree that is not installed
        return "0.0.0"


def _dist_info_version() -> str | None:
    """``Version:`` of the distribution ``importlib.metadata`` would find first, or None if unsure.

    It searches ``sys.path`` in order and takes the first folder holding a
    ``curate_datasets-*.dist-info`` or ``curate_datasets-*.egg-info`` entry (names compared
    case-insensitively, ``-``/``_``/``.`` alike). A ``curate-*.dist-info`` is another project's.
    """
    import os
    import re
    import sys

    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except NotADirectoryError:  # a zip: importlib.metadata looks inside, this does not
            return None
        except OSError:  # missing or unreadable: importlib.metadata skips it too
            continue
        found = [
            n
            for n in names
            if n.lower().endswith((".dist-info", ".egg-info"))
            and re.sub(r"[-_.]+", "_", n.lower().rpartition(".")[0].partition("-")[0])
            == _FOLDER_NAME
        ]
        if not found:
            continue
        if len(found) != 1 or not found[0].lower().endswith(".dist-info"):
            return None
        try:
            with open(os.path.join(entry or ".", found[0], "METADATA"), encoding="utf-8") as f:
                for line in f:
                    if not line.strip():  # the end of the headers
                        return None
                    key, _, value = line.partition(":")
                    if key.strip().lower() == "version":
                        return value.strip() or None
        except OSError:
            return None
        return None
    return None
