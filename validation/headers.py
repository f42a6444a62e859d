"""Recognising a drop's header line and deciding its language.

langdetect cannot be trusted on a header: measured here, it labels `ICML 2025 论文列表` Korean
and `ICML 2025 Papers` Catalan. A header is a venue, a year and a short list phrase, so its
language is decided by the phrase: first a registry of known phrases, then the script the
phrase is written in, and only for an unknown phrase in Latin script by langdetect.
"""

from __future__ import annotations

import re
import unicodedata

from validation.language import SCRIPT_LANGUAGE, SCRIPT_LANGUAGES, letters_by_script
from validation.records import Header

# Known list phrases, compared after NFKC and case folding.
PHRASES: dict[str, str] = {
    # English
    "papers": "en",
    "accepted papers": "en",
    "paper list": "en",
    "list of papers": "en",
    "accepted paper list": "en",
    "abstracts": "en",
    "paper abstracts": "en",
    "accepted abstracts": "en",
    "proceedings": "en",
    "proceedings of": "en",  # before the venue: "Proceedings of ICML 2025"
    # Chinese (simplified and traditional)
    "论文列表": "zh",
    "论文": "zh",
    "论文摘要": "zh",
    "录用论文": "zh",
    "接收论文": "zh",
    "论文清单": "zh",
    "論文列表": "zh",
    "論文清單": "zh",
    # Japanese
    "論文一覧": "ja",
    "採択論文": "ja",
    "論文リスト": "ja",
    # Korean
    "논문 목록": "ko",
    "논문": "ko",
    # German, French, Spanish
    "angenommene beiträge": "de",
    "artikel": "de",
    "liste des articles": "fr",
    "articles acceptés": "fr",
    "artículos aceptados": "es",
    "lista de artículos": "es",
}

_HEADER = re.compile(
    r"^(?P<venue>[^\W\d_][\w&.+/-]*(?: [^\W\d_][\w&.+/-]*){0,3})"
    r" (?P<year>\d{4})(?: (?P<phrase>.+))?$"
)
MAX_HEADER_WORDS = 10
MAX_HEADER_CHARS = 100


def _script_language(text: str) -> str | None:
    """The language a script implies, for scripts that name (nearly) one language; a phrase is
    short, so any letter of kana, Hangul or Han decides (the body check weighs the scripts)."""
    counts = letters_by_script(text)
    for script in ("kana", "hangul", "han"):
        if counts[script]:
            return SCRIPT_LANGUAGE[script]
    for script in counts:  # the first other script of the phrase
        if script in SCRIPT_LANGUAGE:
            return SCRIPT_LANGUAGE[script]
        if script in SCRIPT_LANGUAGES:
            return SCRIPT_LANGUAGES[script][0]
    return None


def phrase_key(phrase: str) -> str:
    """A list phrase as the registry compares it: NFKC, case folded, single spaces."""
    return " ".join(unicodedata.normalize("NFKC", phrase).casefold().split())


def script_conflict(phrase: str, language: str) -> str | None:
    """Why a configured phrase cannot be in ``language``, judged by its script, or None.

    The script decides first: a phrase in kana cannot be configured as French. Han alone is
    shared by Chinese and Japanese, so either is accepted for it.
    """
    by_script = _script_language(phrase_key(phrase))
    if by_script is None or by_script == language or (by_script, language) == ("zh", "ja"):
        return None
    return f"its script says {by_script!r}, not {language!r}"


def header_language(
    phrase: str, extra: dict[str, str] | None = None
) -> tuple[str | None, str, float | None]:
    """(language, how it was decided, langdetect probability if it was used).

    ``extra`` holds the configured phrases (keys as :func:`phrase_key` makes them), which the
    config has already checked against their script.
    """
    key = phrase_key(phrase)
    if not key:
        return None, "none", None
    if key in PHRASES:
        return PHRASES[key], "registry", None
    if extra and key in extra:
        return extra[key], "config", None
    by_script = _script_language(key)
    if by_script is not None:
        return by_script, "script", None
    from validation.language import detect

    lang, prob = detect(phrase)
    return lang, "langdetect", prob


def _split_leading_phrase(venue: str, extra: dict[str, str] | None) -> tuple[str, str]:
    """("Proceedings of", "ICML") from "Proceedings of ICML": a known phrase may come first."""
    words = venue.split(" ")
    for n in range(len(words) - 1, 0, -1):
        key = phrase_key(" ".join(words[:n]))
        if key in PHRASES or (extra and key in extra):
            return " ".join(words[:n]), " ".join(words[n:])
    return "", venue


def parse_header(line: str, extra_phrases: dict[str, str] | None = None) -> Header | None:
    """The header in ``line``, or None when the line is not a header (e.g. an abstract).

    ``<VENUE> <YEAR> <phrase>`` or ``<phrase> <VENUE> <YEAR>``; ``extra_phrases`` are the
    configured list phrases, on top of the built-in ones.
    """
    text = " ".join(line.split())
    if not text or len(text) > MAX_HEADER_CHARS or len(text.split()) > MAX_HEADER_WORDS:
        return None
    m = _HEADER.match(text)
    if m is None or text.endswith("."):
        return None
    phrase = m.group("phrase") or ""
    venue = m.group("venue")
    if not phrase:
        phrase, venue = _split_leading_phrase(venue, extra_phrases)
    language, source, score = header_language(phrase, extra_phrases)
    return Header(
        text=text,
        venue=venue,
        year=int(m.group("year")),
        phrase=phrase,
        language=language,
        language_source=source,
        language_score=score,
    )
