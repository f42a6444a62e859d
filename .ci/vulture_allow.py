"""Names the dead-code check (vulture, in .ci/run) cannot see used, each with the reason."""

from langdetect import DetectorFactory

from curate import __dir__, __getattr__
from curate.ingest.formats.columnar import Arrow, Parquet
from curate.ingest.formats.delimited import Csv, Tsv
from curate.ingest.formats.fields import Hashed
from curate.ingest.formats.jsonl import JsonLines
from curate.ingest.formats.text import TextDrops
from curate.project.toolkit import _Links
from curate.release.diff import Diff
from curate.report.html import compiled_template
from curate.storage import _Raw
from curate.transform.clean import CleanResult
from validation import residue, schema, texsymbols_pylatexenc

__all__ = ["USED"]
USED = (
    __getattr__,  # PEP 562: Python calls it for `curate.X`
    __dir__,  # PEP 562
    schema.__getattr__,  # PEP 562: the lazily built RECORD_SCHEMA
    TextDrops,  # registered by its module path (curate.ingest.formats)
    JsonLines,  # registered by its module path, as the others below
    Csv,
    Tsv,
    Parquet,
    Arrow,
    Hashed.readable,  # io.RawIOBase's protocol: BufferedReader asks it
    _Raw.seekable,  # io.RawIOBase's protocol: BufferedReader.seek asks it
    Diff.data_changed,  # part of the comparison's public answer (tests read it)
    CleanResult.fixed_mojibake,  # part of the cleaner's public answer (tests read it)
    residue.has_any,  # the residue module's API: any kind at all (tests use it)
    compiled_template,  # writes report.html.j2.compiled again (its test reads it)
    texsymbols_pylatexenc.COPIED_FROM,  # the release the table was copied from (its test reads it)
    schema.records_frame,  # the record table as pandas sees it (the contract test's oracle)
    DetectorFactory.seed,  # langdetect reads it: the seed of its sampling
    _Links.handle_starttag,  # html.parser.HTMLParser's protocol: feed() calls it
)
