"""CSV files as users export them: the hint for a file that is not comma-separated."""

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
