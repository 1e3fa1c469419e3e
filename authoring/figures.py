"""Draw the course's fixed figures into notebooks/figures/ (run once; the PNGs are committed).

    python authoring/figures.py
"""

from __future__ import annotations

from pathlib import Path

from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from sdpa_helpers import plots

FIGURES = Path(__file__).resolve().parent.parent / "notebooks" / "figures"


def sdpa_diagram(path: Path) -> None:
    """The paper's Figure 2 (left), redrawn: MatMul -> Scale -> Mask (opt.) -> SoftMax -> MatMul."""
    fig, ax = plots.new_figure(figsize=(4.2, 6.2), dpi=110)
    ax.set_axis_off()
    ax.set(xlim=(0, 10), ylim=(0, 15))
    boxes = [  # (label, y, colour)
        ("MatMul", 2.6, plots.OKABE_ITO["sky_blue"]),
        ("Scale  ×1/√d_k", 4.9, plots.OKABE_ITO["yellow"]),
        ("Mask (opt.)", 7.2, plots.OKABE_ITO["reddish_purple"]),
        ("SoftMax", 9.5, plots.OKABE_ITO["bluish_green"]),
        ("MatMul", 11.8, plots.OKABE_ITO["sky_blue"]),
    ]
    x0, w, h = 2.2, 5.0, 1.2
    for label, y, colour in boxes:
        ax.add_patch(FancyBboxPatch((x0, y), w, h, boxstyle="round,pad=0.1", facecolor=colour,
                                    edgecolor="black", alpha=0.85))
        ax.text(x0 + w / 2, y + h / 2, label, ha="center", va="center", fontsize=12)
    arrow = dict(arrowstyle="-|>", mutation_scale=14, color="black", linewidth=1.2)
    for (_, y1, _), (_, y2, _) in zip(boxes, boxes[1:]):
        ax.add_patch(FancyArrowPatch((x0 + w / 2, y1 + h + 0.1), (x0 + w / 2, y2 - 0.1), **arrow))
    for x, name in ((3.4, "Q"), (6.0, "K")):
        ax.text(x, 0.5, name, ha="center", va="center", fontsize=14, fontweight="bold")
        ax.add_patch(FancyArrowPatch((x, 0.9), (x, 2.5), **arrow))
    ax.text(8.9, 0.5, "V", ha="center", va="center", fontsize=14, fontweight="bold")
    ax.add_patch(FancyArrowPatch((8.9, 0.9), (8.9, 12.4), **arrow))
    ax.add_patch(FancyArrowPatch((8.9, 12.4), (x0 + w + 0.1, 12.4), **arrow))
    ax.add_patch(FancyArrowPatch((x0 + w / 2, 13.1), (x0 + w / 2, 14.6), **arrow))
    ax.text(x0 + w / 2 + 0.3, 14.3, "output", ha="left", va="center", fontsize=11)
    fig.savefig(path, dpi=110, facecolor="white")


if __name__ == "__main__":
    FIGURES.mkdir(parents=True, exist_ok=True)
    sdpa_diagram(FIGURES / "sdpa_diagram.png")
    print("wrote", FIGURES / "sdpa_diagram.png")
