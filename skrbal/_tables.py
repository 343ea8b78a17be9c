"""Markdown tables of results: the one writer of the reports and the command line."""

from __future__ import annotations

import pandas as pd

__all__ = ["markdown_table", "warning_table"]


def _cell(value, column, formats) -> str:
    if isinstance(value, str):
        return value
    if formats is not None:
        return formats.get(column, formats.get(None, "{}")).format(value)
    if float(value).is_integer() and abs(value) < 1e6:
        return f"{int(value)}"
    return f"{value:.3g}" if abs(value) >= 100 else f"{value:.3f}"


def markdown_table(
    table: pd.DataFrame, index_name: str = "method", formats: dict | None = None
) -> str:
    """The one Markdown table writer of the command line and the reports.

    ``formats`` maps a column name (``None``: every other column) to a
    ``str.format`` pattern; by default integers print as integers and other
    numbers with three decimals or three significant digits from 100 on.
    """
    header = [index_name, *map(str, table.columns)]
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---" for _ in header) + "|",
    ]
    for index, row in table.iterrows():
        cells = [str(index)]
        cells += [_cell(value, column, formats) for column, value in row.items()]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def warning_table(totals: pd.DataFrame) -> pd.DataFrame:
    """Per method and warning category: runs that raised it, and how often."""
    rows = []
    if "warnings" in totals.columns:
        for (method, text), group in totals.groupby(["method", "warnings"], sort=False):
            if not isinstance(text, str):
                continue  # no warning (an empty cell read back from CSV)
            for part in filter(None, text.split("; ")):
                name, _, count = part.rpartition(":")
                rows.append((method, name, len(group), int(count) * len(group)))
    table = pd.DataFrame(rows, columns=["method", "warning", "in_runs", "count"])
    table = table.groupby(["method", "warning"], sort=False).sum()
    runs = totals.groupby("method", sort=False).size()
    table.insert(1, "of_runs", runs.reindex(table.index.get_level_values(0)).values)
    return table.reset_index()
