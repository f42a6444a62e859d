"""The report's charts, as inline SVG: no script, font or image is fetched to draw them."""

from __future__ import annotations

import html
import math
from collections.abc import Callable

from markupsafe import Markup

# One colour per chart (colour-blind safe, from the seaborn "deep" palette): the browser test
# looks for each one in a screenshot to know that chart was drawn.
COLOURS = {"lengths": "#4c72b0", "languages": "#55a868", "warning": "#dd8452", "error": "#c44e52"}

# The charts are written as SVG by hand: the few rectangles, ticks and words they hold cost
# microseconds to write, where importing and drawing with matplotlib cost seconds per build (and
# ~60 MB installed). Sizes are in the SVG's own units; the page scales it to the width of its box.
# 520 units is the width the matplotlib figures had (5.2 in at 100 dpi), so the layout is unchanged.
CHART_WIDTH = 520
FONT = 14  # matplotlib's 10 pt in its 374.4 pt wide figure, in these units
TICK = 5  # length of a tick mark
INK = "#222"  # axes and words, the page's text colour


def _num(x: float) -> str:
    """A coordinate with at most two decimals and no trailing zeros: the same bytes every run."""
    text = f"{x:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def _text_width(text: str) -> float:
    """A generous estimate of the width of ``text``, to reserve room for labels.

    There are no font metrics here (the page's font is the reader's): an average sans-serif
    glyph is about 0.55 em wide, so 0.62 em errs on the side of space; wide (CJK) characters
    count as a full em.
    """
    return sum(FONT if ord(c) >= 0x2E80 else 0.62 * FONT for c in text)


def _step(span: float, max_intervals: int) -> int:
    """The smallest whole step of 1, 2, 2.5 or 5 times a power of ten that cuts ``span`` into at
    most ``max_intervals`` intervals (the steps matplotlib's default locator chooses from; whole
    numbers only, since every axis counts words, abstracts or findings)."""
    power = 1
    while True:
        for mantissa in (1, 2, 2.5, 5):
            step = mantissa * power
            if step == int(step) and span / step <= max_intervals:
                return int(step)
        power *= 10


def _ticks(lo: float, hi: float, length: float, room: float) -> list[int]:
    """Tick values within [lo, hi] for an axis ``length`` units long with at least ``room``
    units between ticks (at most nine intervals, like matplotlib's default locator)."""
    step = _step(hi - lo, max(1, min(9, int(length // room))))
    first = -(-lo // step) * step  # the first multiple of step at or above lo
    return list(range(int(first), int(hi) + 1, step))


def _x_room(widest: str) -> float:
    """Room between ticks of a horizontal axis: three ems, and more than its widest number."""
    return max(3 * FONT, _text_width(widest) + FONT)


Y_ROOM = 2 * FONT  # between ticks of a vertical axis, whose labels stack: two ems (matplotlib's)


def _plural(n: int, noun: str) -> str:
    return f"{n:,} {noun[:-1] if n == 1 and noun.endswith('s') else noun}"


def _svg(key: str, height: float, title: str, desc: str, body: list[str]) -> Markup:
    """The chart as inline SVG: its title and a description of its data for screen readers
    (``role="img"`` makes the parts one image to them), each mark with its own ``<title>``
    (the browser shows it on hover). Ids are fixed per chart, so the bytes are too."""
    head = (
        f'<svg role="img" xmlns="http://www.w3.org/2000/svg" width="{CHART_WIDTH}" '
        f'height="{_num(height)}" viewBox="0 0 {CHART_WIDTH} {_num(height)}" '
        f'aria-labelledby="svg-{key}-title svg-{key}-desc" font-family="system-ui, sans-serif" '
        f'font-size="{FONT}" fill="{INK}">'
        f'<title id="svg-{key}-title">{html.escape(title)}</title>'
        f'<desc id="svg-{key}-desc">{html.escape(desc)}</desc>'
    )
    return Markup("\n".join([head, *body, "</svg>"]))


def _axes(left: float, top: float, right: float, bottom: float) -> str:
    """The left and bottom axis lines (no box: the top and right ones carry nothing)."""
    return (
        f'<path d="M{_num(left)} {_num(top)}V{_num(bottom)}H{_num(right)}" fill="none" '
        f'stroke="{INK}" stroke-width="1"/>'
    )


def _x_ticks(
    ticks: list[int], x: Callable[[float], float], bottom: float, label: str, centre: float
) -> list[str]:
    """Tick marks and numbers under the bottom axis, and the axis label below them."""
    marks = "".join(f"M{_num(x(t))} {_num(bottom)}v{TICK}" for t in ticks)
    out = [f'<path d="{marks}" stroke="{INK}" stroke-width="1"/>'] if ticks else []
    out.append('<g text-anchor="middle">')
    out += [
        f'<text x="{_num(x(t))}" y="{_num(bottom + TICK + 3 + FONT)}">{t:,}</text>' for t in ticks
    ]
    label_y = bottom + TICK + 9 + 2 * FONT
    out.append(f'<text x="{_num(centre)}" y="{_num(label_y)}">{html.escape(label)}</text></g>')
    return out


def length_chart(
    word_counts: list[int], noun: tuple[str, str] = ("abstract", "abstracts")
) -> Markup:
    """A histogram of words per record (``noun``: singular, plural): the bins matplotlib's
    ``hist`` drew (``numpy.histogram`` with min(40, max(5, distinct values)) equal bins), on a
    count axis from 0."""
    one, many = noun
    import numpy as np

    height = 260.0
    if word_counts:
        bins = min(40, max(5, len(set(word_counts))))
        counts_np, edges_np = np.histogram(word_counts, bins=bins)
        counts, edges = [int(c) for c in counts_np], [float(e) for e in edges_np]
    else:
        counts, edges = [], [0.0, 1.0]
    span = edges[-1] - edges[0]
    x0, x1 = edges[0] - 0.05 * span, edges[-1] + 0.05 * span  # matplotlib's 5% margins
    y1 = max(1, max(counts, default=0)) * 1.05
    widest_y = f"{int(y1):,}"
    left = 1.6 * FONT + _text_width(widest_y) + TICK + 4
    top, right = FONT / 2 + 4, CHART_WIDTH - _text_width(f"{int(x1):,}") / 2 - 4
    bottom = height - (2 * FONT + 2 * TICK + 16)

    def x(v: float) -> float:
        return left + (v - x0) / (x1 - x0) * (right - left)

    def y(v: float) -> float:
        return bottom - v / y1 * (bottom - top)

    bars = [f'<g fill="{COLOURS["lengths"]}">']
    for i, n in enumerate(counts):
        if not n:
            continue
        # numpy's bins are [a, b) but the last is [a, b]: the whole numbers each one holds
        lo = math.ceil(edges[i])
        hi = math.floor(edges[i + 1]) if i == len(counts) - 1 else math.ceil(edges[i + 1]) - 1
        words = _plural(lo, "words") if lo >= hi else f"{lo:,}–{hi:,} words"
        bars.append(
            f'<rect x="{_num(x(edges[i]))}" y="{_num(y(n))}" '
            f'width="{_num(x(edges[i + 1]) - x(edges[i]))}" height="{_num(bottom - y(n))}">'
            f"<title>{words}: {_plural(n, many)}</title></rect>"
        )
    bars.append("</g>")
    yticks = _ticks(0, y1, bottom - top, Y_ROOM)
    xticks = _ticks(x0, x1, right - left, _x_room(f"{int(x1):,}"))
    ymarks = "".join(f"M{_num(left)} {_num(y(t))}h-{TICK}" for t in yticks)
    body = [
        *bars,
        _axes(left, top, right, bottom),
        *_x_ticks(xticks, x, bottom, f"words per {one}", (left + right) / 2),
        f'<path d="{ymarks}" stroke="{INK}" stroke-width="1"/><g text-anchor="end">',
        *[
            f'<text x="{_num(left - TICK - 3)}" y="{_num(y(t))}" dy=".35em">{t:,}</text>'
            for t in yticks
        ],
        "</g>",
        f'<text text-anchor="middle" transform="translate({_num(FONT)} '
        f'{_num((top + bottom) / 2)}) rotate(-90)">{many}</text>',
    ]
    if word_counts:
        desc = (
            f"Histogram of {_plural(len(word_counts), many)} by words per {one}, "
            f"{len(counts)} bins from {min(word_counts):,} to {max(word_counts):,} words; the "
            f"fullest bin holds {_plural(max(counts), many)}."
        )
    else:
        desc = f"No {many}."
    return _svg("lengths", height, f"{one[:1].upper()}{one[1:]} lengths", desc, body)


def bar_chart(
    key: str,
    title: str,
    by: str,
    labels: list[str],
    values: list[int],
    colours: list[str],
    xlabel: str,
    notes: list[str] | None = None,
) -> Markup:
    """Horizontal bars, the first label at the top, each bar's count written at its end; the
    count axis runs from 0 to 12% past the longest bar (matplotlib's margin), ``notes`` add to
    each bar's hover text (a finding code's severity)."""
    height = max(140.0, 32.0 * len(labels) + 80)
    x1 = max(1, max(values, default=0)) * 1.12
    left = max((_text_width(label) for label in labels), default=0) + TICK + 8
    widest_value = max((f"{v:,}" for v in values), key=len, default="0")
    right = CHART_WIDTH - max(_text_width(widest_value) + 8 - 0.1 * (CHART_WIDTH - left), 8)
    top, bottom = 6.0, height - (2 * FONT + 2 * TICK + 16)
    slot = (bottom - top) / max(1, len(labels))

    def x(v: float) -> float:
        return left + v / x1 * (right - left)

    bars, words, ymarks = [], [], []
    for i, (label, value, colour) in enumerate(zip(labels, values, colours, strict=True)):
        centre = top + (i + 0.5) * slot
        note = f" ({notes[i]})" if notes else ""
        bars.append(
            f'<rect x="{_num(left)}" y="{_num(centre - 0.4 * slot)}" '
            f'width="{_num(x(value) - left)}" height="{_num(0.8 * slot)}" fill="{colour}">'
            f"<title>{html.escape(label)}: {_plural(value, xlabel)}{html.escape(note)}</title>"
            "</rect>"
        )
        ymarks.append(f"M{_num(left)} {_num(centre)}h-{TICK}")
        words.append(
            f'<text x="{_num(left - TICK - 3)}" y="{_num(centre)}" dy=".35em" '
            f'text-anchor="end">{html.escape(label)}</text>'
            f'<text x="{_num(x(value) + 4)}" y="{_num(centre)}" dy=".35em">{value:,}</text>'
        )
    xticks = _ticks(0, x1, right - left, _x_room(f"{int(x1):,}"))
    body = [
        *bars,
        _axes(left, top, right, bottom),
        *_x_ticks(xticks, x, bottom, xlabel, (left + right) / 2),
        f'<path d="{"".join(ymarks)}" stroke="{INK}" stroke-width="1"/>' if ymarks else "",
        *words,
    ]
    parts = [
        f"{label} {value:,}" + (f" ({notes[i]})" if notes else "")
        for i, (label, value) in enumerate(zip(labels, values, strict=True))
    ]
    desc = f"{xlabel.capitalize()} by {by}: " + ", ".join(parts) + "."
    return _svg(key, height, title, desc if parts else f"No {xlabel}.", body)
