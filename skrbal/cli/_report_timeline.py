"""The report's action panel for long histories: a share per day or week.

Over thousands of hourly steps, an action drawn step by step is a barcode
(each switch a line as thin as a pixel). Past :data:`LONG` steps the report
draws instead, for each period (a day, or a week past 120 days; a
two-hundredth of the span for steps or seconds), the share of its steps
whose action was each action other than the first (do nothing): a repair
recommended on a few hours of a day reads as a short bar, a week of repair
as a full one.
"""

from __future__ import annotations

__all__ = ["LONG", "draw_action_shares", "draw_period_money"]

# Past this many steps the action panel is drawn as shares per period.
LONG = 1500
_MANY_DAYS = 120


def _bins(display):
    """Each step's bin, the bins' left edges and their width, and their name."""
    import numpy as np
    import pandas as pd

    time = display.time
    if display.time_axis == "datetime":
        stamps = pd.DatetimeIndex(time)
        span = stamps[-1] - stamps[0]
        unit, name = ("W", "week") if span.days > _MANY_DAYS else ("D", "day")
        periods = stamps.to_period(unit)
        lefts = periods.unique().to_timestamp()
        width = pd.Timedelta(days=7 if unit == "W" else 1)
        codes = pd.Index(periods.unique()).get_indexer(periods)
        return codes, np.asarray(lefts), width, name
    values = np.asarray(time, dtype=float)
    width = max((values[-1] - values[0]) / 200.0, 1.0)
    codes = np.floor((values - values[0]) / width).astype(np.int64)
    lefts = values[0] + np.arange(codes.max() + 1) * width
    name = "bin of " + (f"{width:g} steps" if display.time_axis == "step" else
                        f"{width:g} s")  # fmt: skip
    return codes, lefts, width, name


def draw_action_shares(display, ax) -> bool:
    """Redraw ``ax`` (the action panel) as shares per period; False if short.

    Parameters
    ----------
    display : AgentHistoryDisplay
        The history drawn, with ``time``, ``actions``, ``action_names``.
    ax : matplotlib Axes
        Its action panel, cleared and redrawn.
    """
    import numpy as np

    actions = np.asarray(display.actions, dtype=np.int64)
    if actions.size <= LONG:
        return False
    codes, lefts, width, name = _bins(display)
    n_bins = len(lefts)
    count = np.bincount(codes, minlength=n_bins)
    for line in list(ax.lines):
        line.remove()
    bottom = np.zeros(n_bins)
    names = display.action_names
    colours = ["tab:red", "tab:purple", "tab:brown", "tab:olive"]
    for k, action in enumerate(sorted(set(actions.tolist()) - {0})):
        share = np.bincount(codes, actions == action, minlength=n_bins) / np.maximum(
            count, 1
        )
        label = names[action] if names is not None else f"action {action}"
        ax.bar(lefts, share, width=width, bottom=bottom, align="edge",
               color=colours[k % len(colours)], label=str(label))  # fmt: skip
        bottom = bottom + share
    ax.set_ylim(0, 1.02)
    ax.set_yticks([0, 0.5, 1])
    ax.set_yticklabels(["0", "50%", "100%"])
    first = names[0] if names is not None else "action 0"
    ax.set_ylabel(f"steps per {name}\nnot '{first}'", fontsize="small")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
    return True


def draw_period_money(display, ax, table, money) -> bool:
    """Redraw the spend panel's limit as each period's money; False if equal.

    A paced budget that carries unspent money over may spend more than its
    ``limit`` in a period; drawn against the flat limit that would look like
    an overspend. ``table`` is :meth:`AgentHistoryDisplay.spend_by_period`,
    ``money`` each of its periods' money.
    """
    import numpy as np

    limit = display.limit_line_
    if limit is None or np.array_equal(money, table["limit"].to_numpy(dtype=float)):
        return False
    limit.remove()
    display.limit_line_ = ax.hlines(
        money, table["start"], table["end"], colors="tab:red", linestyles="--",
        label="money of the period (limit + carried over)",
    )  # fmt: skip
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
    return True
