"""Parameter grids of a test: every pair of values, or the whole product.

An expensive grid of settings (the learner-agent equivalence grid) is run in
CI as a *pairwise* covering: a few cells, chosen so that every pair of values
of any two factors meets in at least one of them. ``make test-thorough``
(``SKRBAL_HYPOTHESIS_PROFILE=thorough``), or ``SKRBAL_FULL_GRIDS=1``, runs the
whole product, as it also draws ten times the property-based examples.
"""

import itertools
import os


def full_grids() -> bool:
    """Whether this run takes whole products (the thorough run)."""
    return os.environ.get("SKRBAL_HYPOTHESIS_PROFILE") == "thorough" or os.environ.get(
        "SKRBAL_FULL_GRIDS", ""
    ) not in ("", "0")


def _pairs(cell):
    return {
        (i, a, j, b) for (i, a), (j, b) in itertools.combinations(enumerate(cell), 2)
    }


def _cells(factors, where):
    cells = itertools.product(*factors)
    return [cell for cell in cells if where is None or where(*cell)]


def pairwise(*factors, where=None) -> list[tuple]:
    """Cells of the product of ``factors`` covering every pair of values.

    Only cells for which ``where(*cell)`` holds are taken, and the pairs to
    cover are those such cells hold. Greedy and deterministic: each cell
    taken is the first, in product order, that covers most pairs not yet
    covered; the cells keep product order.
    """
    cells = _cells(factors, where)
    uncovered = set().union(*map(_pairs, cells)) if cells else set()
    chosen = []
    while uncovered:
        best = max(cells, key=lambda cell: len(_pairs(cell) & uncovered))
        chosen.append(best)
        uncovered -= _pairs(best)
    if not chosen and cells:  # one factor: no pairs, every value is a cell
        chosen = cells
    order = {cell: k for k, cell in enumerate(cells)}
    return sorted(set(chosen), key=order.__getitem__)


def grid(*factors, where=None) -> list[tuple]:
    """The whole product in the thorough run, else a pairwise covering.

    ``where(*cell)``, if given, keeps only the cells for which it holds.
    """
    if full_grids():
        return _cells(factors, where)
    return pairwise(*factors, where=where)
