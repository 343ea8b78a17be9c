"""The commands of ``skrbal fleet``: init, observe, status, report."""

from __future__ import annotations

import html
import json
import math
import re
import sys
import time

import numpy as np
import pandas as pd

from skrbal._datetimes import carry_utc_offsets
from skrbal.cli._agent_store import guarded, open_store
from skrbal.cli._data import read_process
from skrbal.cli._output import check_output, write_output
from skrbal.cli._time_options import timestamps

__all__ = ["init", "inspect", "observe", "report", "status"]


def draws_words(n: int) -> str:
    """``"1 draw"``, ``"3 draws"``: the fleet budget's draws in words."""
    return f"{n} draw" if n == 1 else f"{n} draws"


def _seconds(times) -> np.ndarray:
    """Times as seconds: numbers as they are, dates since the epoch (UTC)."""
    values = np.asarray(times)
    if values.dtype.kind in "fiu":
        return values.astype(np.float64)
    index = pd.DatetimeIndex(pd.to_datetime(values, utc=True))
    return ((index - pd.Timestamp(0, tz="UTC")) / pd.Timedelta(seconds=1)).to_numpy()


def _estimator(method_name: str):
    from skrbal.experiments import get_method

    estimator = get_method(method_name).estimator(None)
    if "mean_prior" in estimator.get_params():
        # The user's own features: a prior centred and scaled on them.
        estimator.set_params(mean_prior="data", covariance_prior="data")
    return estimator


def _read_fleet(args, process):
    from skrbal.datasets import load_fleet_campaign

    return load_fleet_campaign(
        args.data,
        process,
        asset_column=args.asset_column,
        label_column=args.label_column or "label",
        feature_columns=args.feature_columns,
        action_column=args.action_column,
        time_column=args.time_column,
        date_format=args.date_format,
    )


def _times_of(campaign):
    times = campaign.time
    if times is not None and campaign.time_zoned:
        times = pd.DatetimeIndex(times).tz_localize("UTC")
    return times


def _estimator_of(args, store, process):
    """``asset -> estimator``: each on the fleet before it (``--shared``), or alone."""
    from sklearn.base import clone

    from skrbal.cli._fleet_shared import check_window, shared_estimator

    if args.shared:
        if args.method is not None:
            raise ValueError(
                "--method: with --shared every agent's model is the pooled "
                "classifier on the fleet's prior; give one or the other"
            )
        return shared_estimator(store, check_window(args.window), process)
    estimator = _estimator(args.method or "gmm-evpi")
    return lambda asset: clone(estimator)


@guarded
def init(args) -> int:
    from skrbal.cli._fleet_shared import commission_assets
    from skrbal.cli._time_options import duration, time_point
    from skrbal.fleet import Fleet, FleetBudget

    process = read_process(args.process)
    if not math.isfinite(args.limit):
        raise ValueError(f"--limit {args.limit:g}: money per period, a finite number")
    if not args.limit >= process.inspection_cost:
        raise ValueError(
            f"--limit {args.limit:g} is below the cost of one inspection, "
            f"{process.inspection_cost:g}: the fleet could never inspect"
        )
    fleet_data = _read_fleet(args, process)
    period = duration(args.period, "--period")
    campaigns = fleet_data.campaigns
    timed = {a: _times_of(campaigns[a]) is not None for a in fleet_data.assets}
    if args.origin is not None:
        origin = time_point(args.origin, "--origin")
    elif all(timed.values()):
        origin = float(
            min(_seconds(_times_of(campaigns[a]))[0] for a in fleet_data.assets)
        )
    else:
        origin = 0.0
    budget = FleetBudget(
        limit=args.limit, period=period, origin=origin, n_recent=args.recent_values
    )
    store = open_store(args, create=True)
    try:
        with Fleet(store, budget=budget, name=args.budget_name) as fleet:
            done = commission_assets(
                fleet,
                fleet_data,
                process,
                _estimator_of(args, store, process),
                shared=args.shared,
            )
        url = store.display_url
    finally:
        store.close()
    if args.json:
        print(json.dumps({"store": url, "budget": args.budget_name, "agents": done}))
    else:
        print(
            f"fleet {args.budget_name!r} in {url}: {len(done)} agents commissioned "
            f"({', '.join(d['asset'] for d in done)}); budget {args.limit:g} per "
            f"{args.period} for all of them"
        )
    return 0


def _line(row: int) -> int:
    """The file's line of the frame's row ``row`` (line 1 is the header)."""
    return row + 2


def _read_observations(args) -> pd.DataFrame:
    source = sys.stdin if args.data == "-" else args.data
    try:
        frame = pd.read_csv(source, skipinitialspace=True)
    except pd.errors.EmptyDataError:
        raise ValueError(f"--data {args.data}: no header line, no rows") from None
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"--data {args.data}: not UTF-8 text (byte {exc.start} cannot be "
            "read); give the observations as a CSV file"
        ) from None
    if args.asset_column not in frame.columns:
        raise ValueError(
            f"--data {args.data}: no asset column {args.asset_column!r}; its "
            f"columns are {list(frame.columns)} (--asset-column)"
        )
    if frame.empty:
        raise ValueError(f"--data {args.data}: no rows to observe")
    missing = frame[args.asset_column].isna()
    if missing.any():
        line = _line(int(np.flatnonzero(missing)[0]))
        raise ValueError(f"--data {args.data}, line {line}: no asset")
    frame[args.asset_column] = frame[args.asset_column].astype(str)
    return frame


def _refuse_naive(args, asset, stamps, lines) -> None:
    """The rule of ``skrbal agent observe`` for agents commissioned with
    zoned times: a time without a UTC offset is refused, not read as UTC."""
    for stamp, line in zip(stamps, lines):
        if not carry_utc_offsets([stamp]):
            raise ValueError(
                f"--data {args.data}, line {line}: {stamp!r} has no UTC offset, "
                f"but agent {asset!r} was commissioned with times that carry one "
                "(such as Z or +01:00); a time without one would be read as UTC, "
                "and a local clock is not: add the offset (Z for UTC)"
            )


def _asset_rows(args, frame, asset, agent, clock, zoned=False):
    rows = frame[frame[args.asset_column] == asset]
    names = getattr(agent, "feature_names_in_", None)
    if names is None:
        names = [
            c for c in frame.columns if c not in (args.asset_column, args.time_column)
        ]
    missing = [n for n in names if n not in frame.columns]
    if missing:
        raise ValueError(
            f"--data {args.data}: no column {missing[0]!r}, a feature of agent "
            f"{asset!r}"
        )
    lines = [_line(int(i)) for i in rows.index]
    X = rows[list(names)].apply(pd.to_numeric, errors="coerce")
    if X.isna().any().any():
        line = lines[int(np.flatnonzero(X.isna().any(axis=1).to_numpy())[0])]
        raise ValueError(
            f"--data {args.data}, line {line}: a feature of asset {asset!r} is "
            "not a number"
        )
    times = None
    if clock == "timestamp":
        if args.time_column not in frame.columns:
            raise ValueError(
                f"--data {args.data}: agent {asset!r} counts time in seconds and "
                f"needs the time column {args.time_column!r} (--time-column)"
            )
        missing = rows[args.time_column].isna().to_numpy()
        if missing.any():
            line = lines[int(np.flatnonzero(missing)[0])]
            raise ValueError(
                f"--data {args.data}, line {line}: no time ({args.time_column!r}) "
                f"for asset {asset!r}"
            )
        times = timestamps(rows[args.time_column])
        if zoned and times.dtype == object:
            _refuse_naive(args, asset, times, lines)
    return lines, X.to_numpy(dtype=np.float64), times


def _in_the_file(args, asset: str, lines, exc, parts) -> str:
    """An agent's refusal, its "row i of this call" as the file's line, and
    what the assets before it committed."""

    def line(match):
        row = int(match[1])
        return f"line {lines[row]}" if row < len(lines) else match[0]

    message = re.sub(r"row (\d+) of this call", line, str(exc).rstrip("."))
    text = f"--data {args.data}, asset {asset!r}: {message}"
    if parts:
        done = ", ".join(f"{p['asset'].iloc[0]!r} ({len(p)} rows)" for p in parts)
        text += (
            f"; the rows of {done} were decided, recorded and written to "
            f"{args.out}: observe again only the rows of the other assets"
        )
    return text


def _write_decisions(args, parts) -> None:
    decisions = pd.concat(parts, ignore_index=True)
    if args.json:
        text = decisions.to_json(orient="records", lines=True, date_format="iso")
    else:
        text = decisions.to_csv(index=False)
    write_output(args.out, text)


@guarded
def observe(args) -> int:
    from skrbal.fleet import Fleet
    from skrbal.online import StoreError

    check_output(args.out)
    frame = _read_observations(args)
    store = open_store(args)
    parts = []
    try:
        known = set(store.agent_names())
        assets = list(dict.fromkeys(frame[args.asset_column]))
        unknown = [a for a in assets if a not in known]
        if unknown:
            raise ValueError(
                f"--data {args.data}: asset {unknown[0]!r} has no agent in the "
                "store; commission it with 'skrbal fleet init'"
            )
        with Fleet(store, name=args.budget_name) as fleet:
            # Every asset's rows are read and checked before the first draw:
            # a bad row of any asset commits nothing.
            batches = []
            for asset in assets:
                clock = store.status(asset)["clock"]
                settings = store.configuration(asset)["settings"]
                zoned = settings.get("time_zone") == "offset"
                agent = fleet.agent(asset)
                batches.append(
                    (asset, *_asset_rows(args, frame, asset, agent, clock, zoned))
                )
            for asset, lines, X, times in batches:
                try:
                    decisions = fleet.observe(asset, X, times)
                except (ValueError, StoreError) as exc:
                    # The assets before it committed: their decisions are
                    # written, and the error says so.
                    if parts:
                        _write_decisions(args, parts)
                    raise ValueError(
                        _in_the_file(args, asset, lines, exc, parts)
                    ) from exc
                decisions.insert(0, "asset", asset)
                parts.append(decisions)
    finally:
        store.close()
    _write_decisions(args, parts)
    return 0


@guarded
def inspect(args) -> int:
    from skrbal.cli._agent_commands import _label, action_text, state_text
    from skrbal.fleet import Fleet

    store = open_store(args)
    try:
        if args.asset not in store.agent_names():
            raise ValueError(f"ASSET {args.asset!r} has no agent in the store")
        with Fleet(store, name=args.budget_name) as fleet:
            agent = fleet.agent(args.asset)
            label = _label(args.label, agent.process)
            action = agent.record_inspection(args.request_id, label)
            process = agent.process
    finally:
        store.close()
    print(
        f"{args.asset} request {args.request_id}: state "
        f"{state_text(process, label)} recorded; "
        f"optimal action {action_text(process, action)}"
    )
    return 0


def _price(budget: dict) -> str:
    """The net value a step needs now, or why none is granted."""
    price = budget["price"]
    return "none left (period spent)" if price is None else f"{price:.3g}"


def _period_words(store, budget: dict) -> str:
    """The budget's period in the agents' words: ``1 week`` for agents with
    timestamps (seconds), ``168 steps`` for agents without."""
    from skrbal.cli._budget_words import duration_words

    names = store.agent_names()
    clock = store.status(names[0])["clock"] if names else "timestamp"
    return duration_words(budget["period"], clock)


def _status_json(budget: dict, table: pd.DataFrame) -> str:
    rows = json.loads(table.to_json(orient="records"))
    return json.dumps({"budget": budget, "structures": rows})


@guarded
def status(args) -> int:
    from skrbal.fleet import fleet_status

    store = open_store(args)
    try:
        budget, table = fleet_status(store, args.budget_name)
        period = _period_words(store, budget)
    finally:
        store.close()
    if args.json:
        print(_status_json(budget, table))
        return 0
    spent = ", ".join(
        f"period {k}: {v:g}"
        for k, v in sorted(budget["spent"].items(), key=lambda kv: int(kv[0]))
    )
    print(
        f"fleet budget {budget['name']!r}: {budget['limit']:g} per "
        f"{period}; spent {spent or 'nothing'}; price now "
        f"{_price(budget)}; {draws_words(budget['n_draws'])}"
    )
    print(table.to_string(index=False))
    return 0


# ---------------------------------------------------------------------- #
# the report page
# ---------------------------------------------------------------------- #
_CSS = (
    "body{font-family:sans-serif;margin:2em;color:#222}"
    "table{border-collapse:collapse;margin:1em 0}"
    "th,td{border:1px solid #bbb;padding:.3em .6em}"
    "td.num{text-align:right}.overdue{background:#fdd}"
)
_HEADER = (
    "structure",
    "belief now",
    "recommended action",
    "open requests",
    "overdue requests",
    "inspected",
    "spend",
    "committed spend",
)


def _e(value) -> str:
    return html.escape(str(value), quote=True)


def _row(r) -> str:
    cells = [
        _e(r.structure),
        f"{_e(r.state_now)} ({r.belief_now:.3f})",
        _e(r.recommended_action),
        f'<td class="num">{int(r.n_open)}</td>',
        f'<td class="num{" overdue" if r.n_overdue else ""}">{int(r.n_overdue)}</td>',
        f'<td class="num">{int(r.n_inspected)}</td>',
        f'<td class="num">{r.spend:.6g}</td>',
        f'<td class="num">{r.committed_spend:.6g}</td>',
    ]
    return (
        "<tr>"
        + "".join(c if c.startswith("<td") else f"<td>{c}</td>" for c in cells)
        + "</tr>"
    )


def _page(budget: dict, table: pd.DataFrame, period: str) -> str:
    import skrbal

    made = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    head = "".join(f"<th>{_e(h)}</th>" for h in _HEADER)
    body = "".join(_row(r) for r in table.itertuples(index=False))
    periods = "".join(
        f'<tr><td>{_e(k)}</td><td class="num">{v:.6g}</td>'
        f'<td class="num">{budget["limit"]:.6g}</td></tr>'
        for k, v in sorted(budget["spent"].items(), key=lambda kv: int(kv[0]))
    )
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; \
style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>skrbal fleet {_e(budget["name"])}</title>
<style>{_CSS}</style>
</head>
<body>
<h1>Fleet {_e(budget["name"])}</h1>
<p>Written {made} by skrbal {_e(skrbal.__version__)}: {len(table)} structures,
one budget of {budget["limit"]:.6g} per {_e(period)},
price now {_e(_price(budget))}, {draws_words(budget["n_draws"])}.</p>
<h2>Structures</h2>
<table id="structures"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>
<h2>Spend by period</h2>
<table id="periods"><thead><tr><th>period</th><th>spent</th><th>limit</th></tr>
</thead><tbody>{periods}</tbody></table>
</body>
</html>
"""


@guarded
def report(args) -> int:
    from skrbal.fleet import fleet_status

    check_output(args.out)
    store = open_store(args)
    try:
        budget, table = fleet_status(store, args.budget_name)
        period = _period_words(store, budget)
    finally:
        store.close()
    if write_output(args.out, _page(budget, table, period)):
        print(f"wrote a report of {len(table)} structures to {args.out}")
    return 0
