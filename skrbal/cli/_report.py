"""``skrbal agent report``: one self-contained HTML page about the agents of a store.

The page needs nothing but itself: the timeline figure is a PNG inside it
(base64), the style is inline, there is no script, and a Content Security
Policy forbids the browser to fetch anything else. Every text that comes
from the store or the user (agent names, state and action names, methods,
reasons, warnings) is escaped. The store is only read (no lock, a read-only
file will do), in the memory of one agent's history at a time.

This module imports only the standard library until the command runs, so
building the parser costs nothing.
"""

from __future__ import annotations

import html
import json
import sys

from skrbal.cli._agent_status import unlabelled_states_text
from skrbal.cli._agent_store import guarded, open_store
from skrbal.cli._budget_words import budget_lines, carried_from
from skrbal.cli._errors import debug_option
from skrbal.cli._options import store_option
from skrbal.cli._output import check_output, write_output
from skrbal.cli._report_now import NowPart

__all__ = ["add_report_parser", "report"]

_LAST_WARNINGS = 10
_SHOWN_PERIODS = 24
_SHOWN_REQUESTS = 50
_PERIOD_HEADER = (
    "period",
    "start",
    "end",
    "requests",
    "spend",
    "committed",
    "charged (cancelled included)",
    "money (limit, plus what earlier periods left, if carried over)",
    "charged / money",
)

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.5em; } h2 { border-bottom: 2px solid #1f77b4; }
table { border-collapse: collapse; margin: 0.5em 0 1em; }
td, th { border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: left; }
th { background: #f3f3f3; } td.num { text-align: right; }
.bar { background: #ff7f0e; height: 0.8em; }
.over { background: #d62728; }
img { max-width: 100%; border: 1px solid #ddd; }
.warning { color: #8a4b00; } code { background: #f6f6f6; }
table.now { border: 2px solid #1f77b4; } table.now th { width: 16em; }
section.agent { margin-bottom: 3em; }
"""


def add_report_parser(verbs) -> None:
    """``skrbal agent report`` among the subcommands of ``skrbal agent``."""
    parser = verbs.add_parser(
        "report",
        parents=[debug_option()],
        help="write one self-contained HTML page about the agents of a store",
        description="Write one HTML page (figures and tables inside it, no "
        "external file, no script) about one agent or every agent of a store: "
        "its status, the requests waiting for a result and their age, the "
        "spend by method and by budget period against the budget, the "
        "timeline of beliefs, EVPI, inspections, actions and spend, and the "
        "last warnings stored. Reads the store only (a read-only file will "
        "do). Without matplotlib (the plot extra) the page has no timeline "
        "figure, and says so.",
    )
    store_option(parser)
    parser.add_argument(
        "--agent",
        "--name",
        dest="agents",
        action="append",
        metavar="NAME",
        help="an agent to report on (repeat for several; default: every agent "
        "of the store)",
    )
    parser.add_argument(
        "--out",
        required=True,
        metavar="FILE",
        help="the HTML file, or - for stdout; a regular file is written "
        "atomically, a device or FIFO in place",
    )
    parser.set_defaults(handler=report)


@guarded
def report(args) -> int:
    """Write the report page of ``args.agents`` (all by default) to ``args.out``."""
    check_output(args.out)
    draw = _has_matplotlib()
    store = open_store(args)
    try:
        names = args.agents or store.agent_names()
        if not names:
            raise ValueError(f"--store {args.store}: the store holds no agent")
        sections = [
            _agent_section(store, name, f"agent-{i}", draw)
            for i, name in enumerate(names)
        ]
        title = _store_title(store.display_url)
    finally:
        store.close()
    page = _page(title, names, sections)
    if write_output(args.out, page):
        noun = "agent" if len(names) == 1 else "agents"
        print(f"wrote a report of {len(names)} {noun} to {args.out}")
        if not draw:
            print(f"skrbal: note: {_NO_FIGURE}", file=sys.stderr)
    return 0


_NO_FIGURE = (
    "the report has no timeline figure: it is drawn with matplotlib, which "
    "cannot be imported (pip install 'skrbal[plot]')"
)


def _has_matplotlib() -> bool:
    """Whether the timeline can be drawn; without it the page has the tables."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


# ---------------------------------------------------------------------- #
# values as text
# ---------------------------------------------------------------------- #
def _e(value) -> str:
    """Any value as escaped HTML text."""
    return html.escape(str(value), quote=True)


def _number(value) -> str:
    if value is None:
        return ""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return _e(value)
    if number != number:  # NaN
        return ""
    return _e(f"{number:.6g}")


def _time_text(value, time_axis: str) -> str:
    """A time as the agent was given it: ISO for dates, else the number.

    ``value`` is the budget's clock (steps or seconds) or a datetime.
    """
    import numpy as np
    import pandas as pd

    if value is None:
        return ""
    if isinstance(value, int | float | np.integer | np.floating):
        if np.isnan(value):
            return ""
        if time_axis == "step":
            return _e(int(value))
        if time_axis == "seconds":
            return _number(value)
        value = pd.Timestamp(float(value), unit="s")
    stamp = pd.Timestamp(value)
    return "" if pd.isna(stamp) else _e(stamp.strftime("%Y-%m-%dT%H:%M:%SZ"))


def _age_text(age: float, time_axis: str) -> str:
    """How long a request has waited: steps, or days/hours/minutes."""
    if time_axis == "step":
        steps = round(age)
        return f"{steps} step" + ("" if steps == 1 else "s")
    seconds = round(age)
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes = rest // 60
    parts = [f"{days} d"] if days else []
    if hours or days:
        parts.append(f"{hours} h")
    parts.append(f"{minutes} min")
    return " ".join(parts[:2])


def _budget_text(config) -> str:
    """A stored budget policy as the expression that builds it."""
    if not isinstance(config, dict) or "__estimator__" not in config:
        return json.dumps(config)
    name = str(config["__estimator__"]).rsplit(".", 1)[-1]
    params = config.get("params", {})
    if name == "AllOf":
        return " & ".join(_budget_text(p) for p in params.get("policies", []))
    inner = ", ".join(f"{k}={json.dumps(v)}" for k, v in sorted(params.items()))
    return f"{name}({inner})"


def _table(header, rows, numeric=()) -> str:
    """An HTML table; cells are HTML already (escaped by the caller)."""
    head = "".join(f"<th>{_e(h)}</th>" for h in header or ())
    head = f"<thead><tr>{head}</tr></thead>" if header else ""
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="num">{cell}</td>' if j in numeric else f"<td>{cell}</td>"
            for j, cell in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return f"<table>{head}<tbody>{body}</tbody></table>"


# ---------------------------------------------------------------------- #
# one agent
# ---------------------------------------------------------------------- #
def _agent_section(store, name: str, anchor: str, draw: bool = True) -> str:
    """The HTML section of one agent; reads its status, history and log."""
    from skrbal._decision import DecisionProcess
    from skrbal.plotting import AgentHistoryDisplay

    status = store.status(name)
    config = store.configuration(name)
    process = DecisionProcess.from_dict(config["process"])
    requests = store.requests(name)
    warnings_ = _last_warnings(store.events(name))
    if draw:
        figure = _new_figure()
        # Times drawn as the agent was given them (its time_format setting).
        display = AgentHistoryDisplay.from_store(store, name, ax=figure.axes)
        from skrbal.cli._report_timeline import draw_action_shares, draw_period_money

        draw_action_shares(display, figure.axes[2])  # not a barcode when long
        if display.budget is not None:
            table = display.spend_by_period()
            money = _period_money(table, config["budget"], status["budget_state"])
            draw_period_money(display, figure.axes[3], table, money)
        timeline = (
            f'<img alt="timeline of agent {_e(name)}: beliefs, EVPI, inspections, '
            f'actions and spend" src="data:image/png;base64,{_png_base64(figure)}">'
        )
    else:
        display = AgentHistoryDisplay.from_store(store, name, draw=False)
        timeline = f'<p class="warning">Not drawn: {_e(_NO_FIGURE)}.</p>'
    now = NowPart(status, process, display, _budget_lines(config, status))
    parts = [
        f'<section class="agent" id="{anchor}">',
        f"<h2>Agent {_e(name)}</h2>",
        now.box(_time_text(_last_clock(display), display.time_axis), requests),
        _status_table(status, process, display),
        _waiting_table(requests, display, now),
        _closed_table(requests, display, process, now),
        _method_table(status),
        _budget_part(config, status, display),
        "<h3>Timeline</h3>",
        timeline,
        _warnings_part(warnings_),
        "</section>",
    ]
    return "\n".join(p for p in parts if p)


def _new_figure():
    from matplotlib.figure import Figure

    # A Figure of its own (no pyplot): no global state, no display backend.
    figure = Figure(figsize=(11, 9), layout="constrained")
    figure.subplots(4, 1, sharex=True, height_ratios=(3, 3, 1.2, 2))
    return figure


def _png_base64(figure) -> str:
    import base64
    import io

    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=80)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _last_clock(display) -> float:
    """The last observation's time in the budget's clock; NaN before any."""
    import numpy as np

    if len(display.time) == 0:
        return float("nan")
    last = display.time[-1]  # times never go back
    if display.time_axis == "datetime":
        return float((last - np.datetime64(0, "s")) / np.timedelta64(1, "s"))
    return float(last)


def _state_text(label, process) -> str:
    """A state found as its name and label (``failure (4)``); '' if unknown."""
    import pandas as pd

    if label is None or (not isinstance(label, str) and pd.isna(label)):
        return ""
    names = process.state_names
    for j, state in enumerate(process.classes_.tolist()):
        if state == label or str(state) == str(label):
            named = names and names[j] != str(state)
            return _e(f"{names[j]} ({state})" if named else state)
    return _e(label)


def _status_table(status, process, display) -> str:
    labelled = ", ".join(
        f"{_state_text(k, process)}: {v}" for k, v in status["labelled"].items()
    )
    last = _last_clock(display)
    rows = [
        ("commissioning samples", _e(status["n_commissioning"])),
        ("observations (steps)", _e(status["n_observations"])),
        ("last observation", _time_text(last, display.time_axis)),
        # 28.21: rows skipped for a missing value, as the store records them.
        ("rows skipped (missing values)", _e(status.get("n_skipped", 0))),
        ("inspection requests", _e(status["n_requests"])),
        ("results", _e(status["n_results"])),
        ("open", _e(status["n_open"])),
        ("expired (overdue)", _e(status["n_expired"])),
        ("cancelled", _e(status["n_cancelled"])),
        ("inspection cost", _number(status["inspection_cost"])),
        ("spend (results)", _number(status["spend"])),
        ("committed spend (with open and expired)", _number(status["committed_spend"])),
        ("last EVPI", _number(status["last_evpi"])),
        ("labelled", labelled),
        ("clock", _e(status["clock"])),
    ]
    unlabelled = unlabelled_states_text(status["labelled"])
    if unlabelled:
        rows.append(("warning", f'<span class="warning">{_e(unlabelled)}</span>'))
    return "<h3>Status</h3>" + _table(None, rows)


def _request_times(requests, display):
    """Time (budget clock) of each request's step, from the display."""
    return dict(zip(display.requests["request_id"].tolist(), display.requests["clock"]))


def _waiting_table(requests, display, now) -> str:
    waiting = requests[requests["status"].isin(["open", "expired"])]
    if waiting.empty:
        return "<h3>Requests waiting for a result</h3><p>None.</p>"
    clocks = _request_times(requests, display)
    last = _last_clock(display)
    rows = []
    for row in waiting.tail(_SHOWN_REQUESTS).itertuples(index=False):
        clock = clocks.get(row.request_id, float("nan"))
        rows.append(
            (
                _e(row.request_id),
                '<span class="warning">overdue (expired)</span>'
                if row.status == "expired"
                else _e(row.status),
                _e(row.step),
                _time_text(clock, display.time_axis),
                _e(_age_text(last - clock, display.time_axis)),
                _number(row.evpi),
                _e(getattr(row, "method", None) or "perfect"),
                *map(_e, now.why(row)),
            )
        )
    more = len(waiting) - len(rows)
    note = f"<p>The {len(rows)} latest of {len(waiting)}.</p>" if more > 0 else ""
    return (
        "<h3>Requests waiting for a result</h3>"
        + _table(
            (
                "request",
                "status",
                "step",
                "requested at",
                "age",
                "EVPI",
                "method",
                "why asked (value vs cost)",
                "belief then",
            ),
            rows,
            numeric=(0, 2, 5),
        )
        + "<p>Age at the last observation. Expired requests have freed their "
        "slot; a result that still comes is taken.</p>" + note
    )


def _closed_table(requests, display, process, now) -> str:
    done = requests[requests["status"].isin(["done", "cancelled"])]
    if done.empty:
        return ""
    clocks = _request_times(requests, display)
    rows = [
        (
            _e(row.request_id),
            _e(row.status),
            _e(row.step),
            _time_text(clocks.get(row.request_id, float("nan")), display.time_axis),
            _state_text(row.label, process),
            _e("" if row.note is None or row.note != row.note else row.note),
            *map(_e, now.why(row)),
        )
        for row in done.tail(_SHOWN_REQUESTS).itertuples(index=False)
    ]
    return "<h3>Latest results and cancellations</h3>" + _table(
        (
            "request",
            "status",
            "step",
            "requested at",
            "state found",
            "note",
            "why asked (value vs cost)",
            "belief then",
        ),
        rows,
        numeric=(0, 2),
    )


def _method_table(status) -> str:
    spends = status.get("spend_by_method")
    if not spends:
        return ""
    rows = [
        (_e(name), _e(status["n_inspections_by_method"][name]), _number(spend))
        for name, spend in spends.items()
    ]
    return "<h3>Spend by inspection method</h3>" + _table(
        ("method", "results", "spend"), rows, numeric=(1, 2)
    )


def _budget_lines(config, status) -> list[str]:
    return budget_lines(
        config["budget"],
        status["budget_state"],
        status["inspection_cost"],
        status["clock"],
        config["settings"].get("time_format") == "iso",
    )


def _budget_part(config, status, display) -> str:
    lines = _budget_lines(config, status)
    words = "<br>".join(
        f'<span class="warning">{_e(line.strip())}</span>'
        if "exhausted" in line
        else _e(line.strip())
        for line in lines
    )
    text = (
        f"<h3>Budget</h3><p>{words}</p><p>Policy: <code>"
        f"{_e(_budget_text(config['budget']))}</code>; state: <code>"
        f"{_e(json.dumps(status['budget_state']))}</code></p>"
    )
    if display.budget is None:
        return text + "<p>No limit per period.</p>"
    table = display.spend_by_period()
    table["limit"] = _period_money(table, config["budget"], status["budget_state"])
    shown = table.tail(_SHOWN_PERIODS)
    rows = []
    for row in shown.itertuples(index=False):
        share = row.charged / row.limit if row.limit > 0 else 0.0
        width = min(100.0, 100.0 * share)
        # A cent's rounding is no overspend.
        over = " over" if row.charged > row.limit + 1e-9 * abs(row.limit) else ""
        rows.append(
            (
                _e(row.period),
                _time_text(row.start, display.time_axis),
                _time_text(row.end, display.time_axis),
                _e(row.n_requests),
                _number(row.spend),
                _number(row.committed),
                _number(row.charged),
                _number(row.limit),
                f'<div class="bar{over}" style="width:{width:.0f}%"></div>',
            )
        )
    note = (
        f"<p>The {len(shown)} latest of {len(table)} periods.</p>"
        if len(table) > len(shown)
        else ""
    )
    return (
        text
        + f"<h4>Spend by period ({_e(display.budget['policy'])})</h4>"
        + _table(_PERIOD_HEADER, rows, numeric=(0, 3, 4, 5, 6, 7))
        + "<p>A budget charges a request when it is made; a cancelled request "
        "keeps its cost (the inspection may have been booked), so the budget "
        "counts the charged column.</p>" + note
    )


def _period_money(table, config, state):
    """The money of each period: its limit, plus what earlier periods left
    when a paced budget carries it over (then spending it is no overspend)."""
    import numpy as np

    first = carried_from(config, state)
    limit = table["limit"].to_numpy(dtype=np.float64)
    if first is None or table.empty:
        return limit
    periods = table["period"].to_numpy()
    charged = table["charged"].to_numpy(dtype=np.float64)
    before = np.concatenate([[0.0], np.cumsum(charged)[:-1]])
    return limit * (periods - first + 1) - before


def _last_warnings(events) -> list:
    """``(seq, kind, when, text)`` of the last warnings logged, oldest first."""
    found = []
    for row in events.itertuples(index=False):
        payload = row.payload if isinstance(row.payload, dict) else {}
        for text in payload.get("warnings") or ():
            found.append((row.seq, row.kind, row.created_at, text))
    return found[-_LAST_WARNINGS:]


def _warnings_part(found) -> str:
    import pandas as pd

    if not found:
        return "<h3>Last warnings</h3><p>None stored.</p>"
    rows = [
        (
            _e(seq),
            _e(kind),
            _e(pd.Timestamp(when, unit="s").strftime("%Y-%m-%dT%H:%M:%SZ")),
            f'<span class="warning">{_e(text)}</span>',
        )
        for seq, kind, when, text in found
    ]
    return "<h3>Last warnings</h3>" + _table(
        ("event", "call", "when (UTC, wall clock)", "warning"), rows, numeric=(0,)
    )


# ---------------------------------------------------------------------- #
# the page
# ---------------------------------------------------------------------- #
def _store_title(url: str) -> str:
    """The store as the page names it: never a path of this machine or a user.

    A SQLite store by its file's name, a server's by host and database.
    """
    from urllib.parse import urlsplit

    if url.startswith("sqlite:"):
        if ":///" not in url:
            return "store in memory"
        path = url.split(":///", 1)[-1]
        return "store " + (path.rstrip("/").rsplit("/", 1)[-1] or "in memory")
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"store {parts.scheme.split('+')[0]}://{host}{port}{parts.path}"


def _page(store: str, names, sections) -> str:
    import time

    import skrbal

    made = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    links = "".join(
        f'<li><a href="#agent-{i}">{_e(name)}</a></li>' for i, name in enumerate(names)
    )
    body = "\n".join(sections)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; \
img-src data:; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>skrbal agents of {_e(store)}</title>
<style>{_CSS}</style>
</head>
<body>
<h1>Agents of {_e(store)}</h1>
<p>Written {made} by skrbal {_e(skrbal.__version__)}.</p>
<ul class="agents">{links}</ul>
{body}
</body>
</html>
"""
