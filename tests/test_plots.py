"""The shared plotting helper keeps figures readable: legends off the data, labels inside the
axes, an axis around values far from 0, and no matplotlib until something is drawn."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from simulator.plotting import dot_chart, figure, label_inside, legend_outside, save, tight_range


def test_legend_sits_outside_the_axes_and_off_the_tallest_bar(tmp_path: Path) -> None:
    fig, ax = figure()
    bars = ax.bar(range(10), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], label="counts")
    ax.axhline(5, color="k", label="reference")
    legend_outside(ax)
    fig.canvas.draw()  # the layout, then the extents
    legend = ax.get_legend()
    assert legend is not None
    box = legend.get_window_extent()
    assert box.x0 >= ax.get_window_extent().x1
    assert not box.overlaps(bars[-1].get_window_extent())
    save(fig, tmp_path / "figure.png")


def test_a_label_by_the_top_right_corner_stays_inside_the_axes(tmp_path: Path) -> None:
    fig, ax = figure()
    ax.bar(range(30), [1] * 29 + [100])
    label_inside(ax, 29.4, 100, "peak 100 on a long day name")
    fig.canvas.draw()
    (text,) = ax.texts
    box, frame = text.get_window_extent(), ax.get_window_extent()
    assert frame.x0 <= box.x0 and box.x1 <= frame.x1
    assert frame.y0 <= box.y0 and box.y1 <= frame.y1
    save(fig, tmp_path / "figure.png")


def test_values_far_from_zero_get_an_axis_around_them(tmp_path: Path) -> None:
    fig, ax = figure()
    levels = {"lowest energy": [3.58, 3.57, 3.66, 4.04]}
    assert dot_chart(ax, ["a", "b", "c", "d"], levels, reference=("random", 4.39))
    low, high = ax.get_ylim()
    assert 3.3 < low < 3.57 and 4.39 < high < 4.7
    save(fig, tmp_path / "figure.png")


def test_values_near_zero_keep_zero_on_the_axis(tmp_path: Path) -> None:
    fig, ax = figure()
    assert not tight_range(ax, [0.05, 0.1, 0.15])
    assert ax.get_ylim()[0] == 0.0
    save(fig, tmp_path / "figure.png")


def test_save_writes_the_file_and_frees_the_figure(tmp_path: Path) -> None:
    import matplotlib.pyplot as plt

    fig, ax = figure()
    ax.plot([1, 2], [3, 4])
    path = save(fig, tmp_path / "deeper" / "line.png")
    assert path.stat().st_size > 1000
    assert fig.number not in plt.get_fignums()


def test_importing_the_plotting_modules_does_not_import_matplotlib() -> None:
    code = (
        "import sys, simulator.plotting, simulator.campus.plots, "
        "advisor.lab.experiments.levels, advisor.lab.experiments.utility_report; "
        "sys.exit('matplotlib' in sys.modules)"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
