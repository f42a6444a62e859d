"""Language identification with langdetect, made deterministic.

langdetect samples n-grams at random; without a fixed seed the same text can get different
answers on different runs, which would make reports and builds irreproducible.
"""

from __future__ import annotations

from functools import lru_cache

from langdetect import DetectorFactory, detect_langs
from langdetect.lang_detect_exception import LangDetectException

DetectorFactory.seed = 0


@lru_cache(maxsize=4096)
def detect(text: str) -> tuple[str | None, float]:
    """(most probable language, its probability); (None, 0.0) when langdetect has no answer."""
    DetectorFactory.seed = 0
    try:
        best = detect_langs(text)[0]
    except LangDetectException:
        return None, 0.0
    lang = best.lang
    if lang.startswith("zh"):
        lang = "zh"
    return lang, float(best.prob)
