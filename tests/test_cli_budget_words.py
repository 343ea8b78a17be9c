"""The budget in words: what a paced budget that carries money over has left."""

from skrbal.cli._budget_words import budget_lines, budget_words

DAY = 86400.0
PACED = {
    "__estimator__": "skrbal.budget.PacedBudget",
    "params": {"limit": 2000.0, "period": 30 * DAY, "origin": 0.0},
}


def test_carried_over_money_is_named_apart_from_the_period_s_own():
    """A paced budget's period showed '1750 of 16650 spent' for 2000 a month.

    The 16650 was this period's 2000 plus what earlier periods left unspent,
    which nothing said: a first-week user read it as a wrong limit.
    """
    state = {
        "first_period": 0,
        "period": 10,
        "spent": 1750.0,
        "total_spent": 7100.0,
        "last_time": 10.5 * 30 * DAY,
    }
    words = budget_words(PACED)
    assert words.endswith("paced over each period; unspent money carries over")
    lines = budget_lines(PACED, state, cost=50.0)
    assert lines[0] == f"budget: {words}"
    assert lines[1].endswith(
        "1750 of 16650 spent (its own 2000, 14650 carried over)"
    ), lines[1]


def test_a_budget_without_carry_over_says_only_its_own_money():
    config = {
        "__estimator__": "skrbal.budget.PacedBudget",
        "params": {**PACED["params"], "carry_over": False},
    }
    state = {"first_period": 0, "period": 3, "spent": 50.0, "total_spent": 900.0}
    assert budget_words(config).endswith("paced over each period")
    line = budget_lines(config, state, cost=50.0)[1]
    assert line.endswith("50 of 2000 spent") and "carried" not in line
