"""The influence diagram of the one-step maintenance decision.

Drawn for the user guide's decision-process page by matplotlib's ``plot``
directive; run on its own, it shows the figure.
"""

import matplotlib.pyplot as plt
from matplotlib.patches import Circle, FancyArrowPatch, Rectangle, RegularPolygon

RADIUS = 0.42
OBSERVED = "#d9d9d9"

# name: (kind, x, y, label)
NODES = {
    "y": ("chance", 1.0, 3.0, r"$y_t$"),
    "x": ("observed", 1.0, 1.3, r"$\mathbf{x}_t$"),
    "d": ("decision", 3.4, 1.3, r"$d_t$"),
    "y_next": ("chance", 5.8, 3.0, r"$y_{t+1}$"),
    "U_y": ("utility", 1.0, 4.55, r"$U(y_t)$"),
    "U_d": ("utility", 3.4, -0.25, r"$U(d_t)$"),
    "U_next": ("utility", 5.8, 4.55, r"$U(y_{t+1})$"),
}
EDGES = [
    ("y", "U_y"),
    ("y", "x"),
    ("y", "y_next"),
    ("x", "d"),
    ("d", "y_next"),
    ("d", "U_d"),
    ("y_next", "U_next"),
]


def node_patch(kind, x, y, scale=1.0):
    """A circle for a random variable, a square for a decision, a diamond
    for a utility; an observed variable is shaded."""
    style = {"edgecolor": "black", "linewidth": 1.4, "zorder": 2}
    radius = RADIUS * scale
    if kind in ("chance", "observed"):
        face = OBSERVED if kind == "observed" else "white"
        return Circle((x, y), radius, facecolor=face, **style)
    if kind == "decision":
        side = 2 * radius * 0.9
        return Rectangle((x - side / 2, y - side / 2), side, side, fc="white", **style)
    return RegularPolygon((x, y), 4, radius=radius * 1.45, fc="white", **style)


def draw(ax):
    patches = {}
    for name, (kind, x, y, label) in NODES.items():
        patches[name] = ax.add_patch(node_patch(kind, x, y))
        size = 11 if kind == "utility" else 14
        ax.text(x, y, label, ha="center", va="center", fontsize=size, zorder=3)
    arrow = {"arrowstyle": "-|>", "mutation_scale": 14, "linewidth": 1.3}
    for start, end in EDGES:
        ax.add_patch(
            FancyArrowPatch(
                NODES[start][1:3],
                NODES[end][1:3],
                patchA=patches[start],
                patchB=patches[end],
                color="black",
                **arrow,
            )
        )
    # The informational link: present when the state is inspected first.
    ax.add_patch(
        FancyArrowPatch(
            NODES["y"][1:3],
            NODES["d"][1:3],
            patchA=patches["y"],
            patchB=patches["d"],
            color="tab:blue",
            linestyle=(0, (3, 2)),
            **arrow,
        )
    )
    ax.text(
        2.45,
        2.45,
        "informational link\n(inspect first)",
        color="tab:blue",
        fontsize=9,
        ha="left",
        va="bottom",
    )
    legend = [
        ("chance", "random variable"),
        ("observed", "observed variable"),
        ("decision", "decision"),
        ("utility", "utility"),
    ]
    for i, (kind, text) in enumerate(legend):
        x = 7.5
        y = 4.2 - 1.05 * i
        ax.add_patch(node_patch(kind, x, y, scale=0.6))
        ax.text(x + 0.45, y, text, va="center", fontsize=9)
    ax.set_xlim(0.3, 9.6)
    ax.set_ylim(-0.95, 5.25)
    ax.set_aspect("equal")
    ax.axis("off")


fig, ax = plt.subplots(figsize=(7.5, 5))
draw(ax)
fig.tight_layout()
plt.show()
