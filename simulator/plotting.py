"""The one look every figure shares, so a person reads any of them at a glance.

Legends sit outside the data, labels stay inside the axes, and an axis of values far from 0 is cut
around them (with a break mark) instead of flattening their differences. matplotlib is imported
only when something is drawn: importing this module, or one that plots, does not load it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

DPI = 120
FAR_FROM_ZERO = 0.5
"""An axis is cut when the data's spread is under this share of its largest magnitude."""
MARGIN = 0.15
"""Room around the data, as a share of its spread (value labels fit above the highest point)."""
MARKERS = "oD^sv<>"


def _pyplot() -> ModuleType:
    import matplotlib

    matplotlib.use("Agg")  # figures go to files: no display
    import matplotlib.pyplot as plt

    return plt


def panels(
    rows: int = 1, cols: int = 1, width: float = 8.0, height: float = 4.0, **options: Any
) -> tuple[Figure, list[Axes]]:
    """``rows`` x ``cols`` axes (flat, row by row) in the common style; the constrained layout
    makes room for legends and labels outside the axes. ``options`` go to ``plt.subplots``."""
    plt = _pyplot()
    fig, grid = plt.subplots(
        rows, cols, figsize=(width, height), squeeze=False, layout="constrained", **options
    )
    axes: list[Axes] = list(grid.flat)
    for ax in axes:
        ax.grid(axis="y", alpha=0.3)
        ax.spines[["top", "right"]].set_visible(False)
    return fig, axes


def figure(width: float = 8.0, height: float = 4.0) -> tuple[Figure, Axes]:
    """One axes in the common style."""
    fig, (ax,) = panels(1, 1, width, height)
    return fig, ax


def legend_outside(axes: Axes | Sequence[Axes], where: Literal["right", "below"] = "right") -> None:
    """One legend for ``axes`` (each label once, from whichever axes has it), to the right of the
    last of them or below the whole figure: never over the data."""
    group = list(axes) if isinstance(axes, Sequence) else [axes]
    entries: dict[str, Any] = {}
    for ax in group:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            entries.setdefault(label, handle)
    if not entries:
        return
    handles, labels = list(entries.values()), list(entries)
    if where == "right":
        group[-1].legend(
            handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False
        )
    else:
        group[-1].figure.legend(
            handles,
            labels,
            loc="outside lower center",
            ncols=min(len(labels), 4),
            fontsize=8,
            frameon=False,
        )


def label_inside(ax: Axes, x: float, y: float, text: str, fontsize: float = 8) -> None:
    """Write ``text`` by the data point (x, y): above it when a line fits, else below, and on the
    side facing the middle of the axes, so it stays inside them (the legend is outside). Call it
    once the data and any set limits are in: the placement is chosen from the limits."""
    from matplotlib.transforms import offset_copy

    ax.autoscale_view()  # settle pending autoscaling: the placement depends on the limits
    fx, fy = ax.transAxes.inverted().transform(ax.transData.transform((x, y)))
    fig = ax.get_figure(root=True)
    assert fig is not None
    line = 1.6 * fontsize * fig.dpi / 72 / ax.bbox.height  # one text line, in axes fractions
    right, above = fx > 0.5, fy + line <= 1.0
    place = offset_copy(fig=fig, trans=ax.transAxes, x=-4 if right else 4, units="points")
    ax.annotate(
        text,
        (x, y),
        xytext=(min(max(fx, 0.0), 1.0), min(max(fy, 0.0), 1.0)),
        textcoords=place,
        ha="right" if right else "left",
        va="bottom" if above else "top",
        fontsize=fontsize,
        bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": "none", "alpha": 0.8},
    )


def tight_range(ax: Axes, values: Sequence[float]) -> bool:
    """Fit the y-axis to ``values``. Values far from 0 get a range around them, so their
    differences show, and a break mark on the axis says it does not start at 0 (True); values
    near 0 keep 0 on the axis (False)."""
    finite = [float(v) for v in values if math.isfinite(v)]
    if not finite:
        return False
    lo, hi = min(finite), max(finite)
    size = max(abs(lo), abs(hi))
    cut = (lo > 0 or hi < 0) and hi - lo < FAR_FROM_ZERO * size
    if cut:
        pad = MARGIN * max(hi - lo, 0.02 * size)
        ax.set_ylim(lo - pad, hi + pad)
        _break_mark(ax, at_bottom=lo > 0)
    else:
        pad = MARGIN * (max(hi, 0.0) - min(lo, 0.0) or 1.0)
        ax.set_ylim(
            min(lo, 0.0) - (pad if lo < 0 else 0.0), max(hi, 0.0) + (pad if hi > 0 else 0.0)
        )
    return cut


def _break_mark(ax: Axes, at_bottom: bool) -> None:
    """The usual '//' across the y-axis near the end that 0 was cut from."""
    y = 0.04 if at_bottom else 0.96
    stroke = [(-1.0, -0.5), (1.0, 0.5)]
    ax.plot(
        [0, 0],
        [y - 0.015, y + 0.015],
        transform=ax.transAxes,
        marker=stroke,
        ms=9,
        linestyle="none",
        color="k",
        clip_on=False,
    )


def dot_chart(
    ax: Axes,
    categories: Sequence[str],
    series: Mapping[str, Sequence[float]],
    reference: tuple[str, float] | None = None,
    value_format: str | None = None,
) -> bool:
    """Values per category as points side by side, one marker per series, with an optional
    dashed reference line. Points, unlike bars, need no axis from 0, so the axis is fitted by
    ``tight_range`` (its answer is returned); ``value_format`` writes each value above its point."""
    step = min(0.8 / max(len(series), 1), 0.25)
    values: list[float] = [reference[1]] if reference else []
    for i, (label, ys) in enumerate(series.items()):
        xs = [c + (i - (len(series) - 1) / 2) * step for c in range(len(categories))]
        ax.plot(xs, ys, MARKERS[i % len(MARKERS)], ms=7, label=label)
        values += ys
        for x, y in zip(xs, ys, strict=True):
            if value_format is not None and math.isfinite(y):
                ax.annotate(
                    value_format.format(y),
                    (x, y),
                    xytext=(0, 6),
                    textcoords="offset points",
                    ha="center",
                    fontsize=7,
                )
    if reference is not None:
        ax.axhline(reference[1], color="k", linestyle="--", lw=1, label=reference[0])
    ax.set_xticks(range(len(categories)), categories)
    ax.set_xlim(-0.5, len(categories) - 0.5)
    return tight_range(ax, values)


def save(fig: Figure, path: str | Path) -> Path:
    """Write ``fig`` to ``path`` (nothing cut off, one resolution for all) and free it."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=DPI, bbox_inches="tight")
    _pyplot().close(fig)
    return out
