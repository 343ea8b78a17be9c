"""Wrong statements against today's default: the table of ``results/unseen_robust.md``.

Reads ``bench_unseen.py`` per-run tables whose arms are a case's statement
(``*-directed``), reversed (``-wrong``), half (``-half``) and double
(``-double``) size, with the screen suffixes of ``bench_unseen.SCREENS``, and
prints, per case and protocol, the EVPI rule's median regret (median
inspections; share of runs that inspected damage) of each statement beside
the ``default`` arm's, and how many of the three wrong statements stay within
10 % of the default's median regret (issue 26's judged cell).

Run (from the repository root)::

    python benchmarks/unseen_robust_table.py \
        benchmarks/results/unseen_robust_weights_z24_runs.csv ...

The "other labels" column is ``'check'`` (arms ``*-chk*``), "size factor"
``'size_factor'`` (``*sz2``), and "one for the damaged states" the arms
``*dmg*``, which name only the damaged states one ``'statement'``.
"""

from __future__ import annotations

import sys

import pandas as pd

TAGS = (
    r"-(w50k03|w25k03|k03|w50|w25|w25tied|tied|chktied|chkdmgsz2|chksz2|sz2|chkdmg"
    r"|chk|dmg)$"
)
WEIGHT = {
    "w50": "0.5",
    "w25": "0.25",
    "w25tied": "0.25",
    "w50k03": "0.5",
    "w25k03": "0.25",
}
STATEMENTS = ("right", "wrong", "half", "double")


def load(paths) -> pd.DataFrame:
    """The EVPI-rule runs, with the statement and its settings as columns."""
    runs = pd.concat([pd.read_csv(path) for path in paths])
    runs = runs[runs.policy == "evpi"].copy()
    tag = runs.arm.str.extract(TAGS)[0].fillna("")
    runs["weight"] = tag.map(WEIGHT).fillna("0.9")
    runs["indicator"] = "per class"
    runs.loc[tag.str.contains("tied"), "indicator"] = "one statement"
    runs.loc[tag.str.contains("dmg"), "indicator"] = "one for the damaged states"
    runs["mean_precision"] = tag.str.contains("k03").map({True: "0.03", False: "0.1"})
    runs["check"] = tag.str.contains("chk").map({True: "yes", False: "no"})
    runs["size_factor"] = tag.str.contains("sz2").map({True: "2", False: "1"})
    runs["statement"] = (
        runs.arm.str.replace(TAGS, "", regex=True)
        .str.replace(r"^(z24|synthetic)-directed", "right", regex=True)
        .str.replace("right-", "", regex=False)
    )
    return runs


def table(runs: pd.DataFrame) -> str:
    lines = [
        "| case | protocol | indicator | weight | mean precision | other labels "
        "| size factor "
        "| default | right | reversed | half | double "
        "| wrong ones within 10 % of default |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    settings = ["indicator", "weight", "mean_precision", "check", "size_factor"]
    for (case, protocol), group in runs.groupby(["case", "protocol"], sort=False):
        default = group[group.statement == "default"]
        base = default.regret.median()
        stated = group[group.statement != "default"]
        for (indicator, weight, precision, check, size), arm in stated.groupby(
            settings
        ):
            cells, within = [], 0
            for statement in STATEMENTS:
                rows = arm[arm.statement == statement]
                if rows.empty:
                    cells.append("")
                    continue
                median = rows.regret.median()
                cells.append(
                    f"{median:,.0f} ({rows.n_inspections.median():.0f}; "
                    f"{rows.damage_found.mean():.0%})"
                )
                within += statement != "right" and median <= 1.1 * base
            n = arm.groupby("statement").repetition.nunique().min()
            lines.append(
                f"| {case} | {protocol} | {indicator} | {weight} | {precision} "
                f"| {check} | {size} "
                f"| {base:,.0f} ({default.n_inspections.median():.0f}) | "
                + " | ".join(cells)
                + f" | {within} of 3 (n={n}) |"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    print(table(load(sys.argv[1:])))
