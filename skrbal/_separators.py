"""Hints for a CSV file written with another separator than the comma.

A spreadsheet's export in many locales separates fields with ';' (or a tab)
and writes decimal commas; read with ',' it is one column, refused obscurely.
Shared by the campaign reader and ``skrbal agent observe``.
"""

from __future__ import annotations

__all__ = ["separator_hint"]


def separator_hint(columns) -> str:
    """A hint when a header read with ',' holds another separator; '' if not."""
    if len(columns) != 1:
        return ""
    header = str(columns[0])
    for separator, name in ((";", "';' (semicolon)"), ("\t", "a tab")):
        if separator in header:
            return (
                f"its header {header[:60]!r} is one column: the fields look "
                f"separated by {name}, perhaps with decimal commas (a "
                "spreadsheet's export in many locales); skrbal reads CSV with ',' "
                "between fields and '.' in numbers: save it so (LibreOffice: "
                "field delimiter ',', or pandas: read_csv(sep=';', decimal=',') "
                "then to_csv())"
            )
    return ""
