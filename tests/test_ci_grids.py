"""The pairwise grids that CI runs in place of whole products (tests/_grids.py)."""

import itertools

from _grids import grid, pairwise  # tests/ is on sys.path

FACTORS = ([None, "em", "smoothing"], list("abcde"), ["p", "q"], [0, 3])


def _pairs(cells):
    return {
        (i, a, j, b)
        for cell in cells
        for (i, a), (j, b) in itertools.combinations(enumerate(cell), 2)
    }


def test_every_pair_of_values_meets_in_a_cell():
    cells = pairwise(*FACTORS)
    assert _pairs(cells) == _pairs(itertools.product(*FACTORS))
    assert 15 <= len(cells) < 60  # at least 3 x 5 cells, far fewer than all
    assert len(set(cells)) == len(cells)
    assert cells == pairwise(*FACTORS)  # the same cells on every run


def test_only_kept_cells_are_taken_and_their_pairs_covered():
    def kept(semi, letter, method, delay):
        return semi != "smoothing" or method != "q"

    cells = pairwise(*FACTORS, where=kept)
    assert all(kept(*cell) for cell in cells)
    allowed = [cell for cell in itertools.product(*FACTORS) if kept(*cell)]
    assert _pairs(cells) == _pairs(allowed)


def test_one_factor_gives_each_value():
    assert pairwise([1, 2, 3]) == [(1,), (2,), (3,)]


def test_the_thorough_run_takes_the_whole_product(monkeypatch):
    monkeypatch.delenv("SKRBAL_FULL_GRIDS", raising=False)
    monkeypatch.setenv("SKRBAL_HYPOTHESIS_PROFILE", "thorough")
    assert grid(*FACTORS) == list(itertools.product(*FACTORS))
    monkeypatch.setenv("SKRBAL_HYPOTHESIS_PROFILE", "ci")
    assert grid(*FACTORS) == pairwise(*FACTORS)
    monkeypatch.setenv("SKRBAL_FULL_GRIDS", "1")
    assert len(grid(*FACTORS)) == 60
