"""CSV for spreadsheets: a text cell is never read as a formula.

A spreadsheet opening a CSV file runs a cell that starts with ``=``, ``+``,
``-`` or ``@`` (and, in some, a tab or carriage return) as a formula: a
cancellation reason, an action name or a client key typed by someone else
could then fetch a URL or run a command on the reader's machine. As OWASP's
*CSV Injection* page recommends, such a text cell is written with a leading
single quote (``'=1+2``), which spreadsheets show and do not evaluate.
Numbers are numbers (``-5.0`` stays); only text cells are changed, and
``--raw`` writes every cell as it is, for programs.
"""

from __future__ import annotations

__all__ = ["FORMULA_STARTS", "neutralise_formulas"]

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _safe(value):
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def neutralise_formulas(table):
    """``table`` with every text cell that a spreadsheet would run quoted.

    Parameters
    ----------
    table : pandas.DataFrame

    Returns
    -------
    table : pandas.DataFrame
        A copy; columns of numbers are left as they are.

    Examples
    --------
    >>> import pandas as pd
    >>> from skrbal.cli._formulas import neutralise_formulas
    >>> table = pd.DataFrame({"note": ["=HYPERLINK(\\"x\\")", "rain"],
    ...                       "evpi": [-1.5, 2.0]})
    >>> neutralise_formulas(table)["note"].tolist()
    ['\\'=HYPERLINK("x")', 'rain']
    >>> neutralise_formulas(table)["evpi"].tolist()
    [-1.5, 2.0]
    """
    from pandas.api.types import is_object_dtype, is_string_dtype

    table = table.copy()
    for column in table.columns:
        values = table[column]
        if is_object_dtype(values) or is_string_dtype(values):
            table[column] = values.map(_safe, na_action="ignore")
    renamed = {c: _safe(c) for c in table.columns if isinstance(c, str)}
    return table.rename(columns=renamed)
