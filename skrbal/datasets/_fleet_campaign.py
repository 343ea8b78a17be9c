"""A fleet campaign: one campaign table for many structures, with an asset column."""

from __future__ import annotations

from sklearn.utils import Bunch

from skrbal.datasets._campaign import _read_table, load_campaign

__all__ = ["load_fleet_campaign"]


def load_fleet_campaign(
    data,
    process=None,
    *,
    asset_column: str = "asset",
    **campaign_params,
) -> Bunch:
    """Read the monitoring campaign of a fleet: one table, one asset column.

    The table is the campaign format of :func:`load_campaign` (features, a
    label column, optionally actions and times) with one more column naming
    the structure (the asset) each row belongs to. The rows of one asset are
    in temporal order; the assets' rows may be interleaved (a fleet's feed in
    arrival order) or one block after another.

    Parameters
    ----------
    data : str, path-like or DataFrame
        A ``.csv`` or ``.parquet`` / ``.pq`` file, or a DataFrame.
    process : DecisionProcess, dict, str or path-like, default=None
        The decision process the labels and actions belong to, as for
        :func:`load_campaign`.
    asset_column : str, default='asset'
        The column naming each row's structure.
    **campaign_params
        Further parameters of :func:`load_campaign` (``label_column``,
        ``feature_columns``, ``time_column``, ``unlabelled``, ...), applied
        to every asset.

    Returns
    -------
    fleet : Bunch
        ``assets`` (the asset names as text, in order of first appearance),
        ``campaigns`` (dict ``{asset: Bunch}``, each as :func:`load_campaign`
        returns it, its rows the asset's), ``rows`` (dict ``{asset: ndarray}``,
        the positions of each asset's rows in the table, counted from 0),
        ``process`` and ``source`` (the file and its SHA-256, or the
        DataFrame's shape and hash).

    Raises
    ------
    ValueError
        When the asset column is missing or has an empty value (naming the
        row), or when an asset's own campaign is invalid (the message of
        :func:`load_campaign`, prefixed by the asset; its row numbers then
        count that asset's rows from 0).

    See Also
    --------
    load_campaign : The campaign of one structure.
    make_fleet : A generated fleet and its campaign table.

    Examples
    --------
    >>> import pandas as pd
    >>> from skrbal import z24_decision_process
    >>> from skrbal.datasets import load_fleet_campaign
    >>> table = pd.DataFrame({
    ...     "asset": ["A", "B", "A", "B"], "time": [0.0, 0.0, 1.0, 1.0],
    ...     "f1": [3.9, 4.4, 3.8, 4.3], "label": [1, 1, 2, 1]})
    >>> fleet = load_fleet_campaign(table, z24_decision_process())
    >>> fleet.assets
    ['A', 'B']
    >>> fleet.campaigns["A"].X.ravel().tolist(), fleet.campaigns["A"].y.tolist()
    ([3.9, 3.8], [1, 2])
    """
    frame, name, source, first_line = _read_table(data)
    if asset_column not in frame.columns:
        raise ValueError(
            f"{name} has no asset column {asset_column!r} (asset_column=): its "
            f"columns are {list(map(str, frame.columns))}."
        )
    names = frame[asset_column]
    missing = names.isna() | (names.astype(str).str.strip() == "")
    if missing.any():
        row = int(missing.to_numpy().argmax())
        raise ValueError(
            f"{name}, row {row + first_line}: the asset column {asset_column!r} "
            "is empty; every row must name its structure."
        )
    names = names.astype(str)
    assets = list(dict.fromkeys(names))
    features = frame.drop(columns=[asset_column])
    campaigns, rows = {}, {}
    for asset in assets:
        mask = (names == asset).to_numpy()
        try:
            campaigns[asset] = load_campaign(
                features[mask].reset_index(drop=True), process, **campaign_params
            )
        except ValueError as exc:
            raise ValueError(
                f"{name}, asset {asset!r} (rows counted within the asset): {exc}"
            ) from None
        campaigns[asset].source = f"{source}; asset {asset!r}"
        rows[asset] = mask.nonzero()[0]
    process = campaigns[assets[0]].process if assets else None
    return Bunch(
        assets=assets, campaigns=campaigns, rows=rows, process=process, source=source
    )
