"""The EVSI choice against perfect-only, before and after a change (issue 26.5).

Reads two per-run tables of ``bench_unseen.py`` on the same splits (``--before``:
the code before the change, ``--after``), and prints, per case, protocol and
arm: the share of splits where the EVSI choice's loss (regret + spend) is
below the perfect-only EVPI rule's, the choice's median loss and cheap
inspections, and the share of splits where the choice after the change has a
lower loss than before (paired on the split).

Run (from the repository root)::

    python benchmarks/unseen_evsi_table.py --before main_runs.csv --after runs.csv
"""

from __future__ import annotations

import argparse

import pandas as pd

KEYS = ["case", "protocol", "arm"]


def wins(runs: pd.DataFrame, policy: str = "choice") -> pd.DataFrame:
    """Per cell: wins vs perfect-only, median loss, cheap inspections, n."""
    wide = runs.pivot_table(
        index=[*KEYS, "repetition"], columns="policy", values="loss"
    )
    cheap = runs[runs["policy"] == policy].set_index([*KEYS, "repetition"])["n_cheap"]
    cells = pd.DataFrame(
        {
            "wins": (wide[policy] < wide["evpi"] - 1e-9),
            "loss": wide[policy],
            "perfect_loss": wide["evpi"],
            "cheap": cheap,
        }
    )
    grouped = cells.groupby(level=KEYS)
    out = grouped.agg(
        wins=("wins", "mean"),
        loss=("loss", "median"),
        perfect_loss=("perfect_loss", "median"),
        cheap=("cheap", "median"),
    )
    out["n"] = grouped.size()
    return out


def table(before: pd.DataFrame, after: pd.DataFrame, policy: str = "choice") -> str:
    """Markdown: each cell before -> after, and the paired comparison."""
    old, new = wins(before, policy), wins(after, policy)
    index = [*KEYS, "repetition"]
    pair = (
        after[after["policy"] == policy].set_index(index)["loss"]
        - before[before["policy"] == policy].set_index(index)["loss"]
    )
    better = (pair < -1e-9).groupby(level=KEYS).mean()
    worse = (pair > 1e-9).groupby(level=KEYS).mean()
    lines = [
        "| case | protocol | arm | n | choice beats perfect-only: before -> after "
        "| median loss of the choice: before -> after (perfect-only) "
        "| median cheap inspections: before -> after "
        "| after vs before, same split: lower / higher loss |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for key in new.index:
        o, n = old.loc[key], new.loc[key]
        lines.append(
            f"| {' | '.join(map(str, key))} | {n['n']:.0f} "
            f"| {o['wins']:.0%} -> **{n['wins']:.0%}** "
            f"| {o['loss']:.0f} -> {n['loss']:.0f} ({n['perfect_loss']:.0f}) "
            f"| {o['cheap']:.0f} -> {n['cheap']:.0f} "
            f"| {better.loc[key]:.0%} / {worse.loc[key]:.0%} |"
        )
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", nargs="+", required=True)
    parser.add_argument("--after", nargs="+", required=True)
    parser.add_argument("--policy", default="choice", choices=["choice", "follow"])
    args = parser.parse_args(argv)
    before = pd.concat([pd.read_csv(p) for p in args.before], ignore_index=True)
    after = pd.concat([pd.read_csv(p) for p in args.after], ignore_index=True)
    print(table(before, after, args.policy))


if __name__ == "__main__":
    main()
