"""A walk along a fleet budget's draws: the chain, the money, the state."""

from __future__ import annotations

import json

from skrbal.exceptions import StoreError
from skrbal.fleet import _schema as schema
from skrbal.fleet._chain import _genesis, _hash
from skrbal.fleet._rows import recorded

__all__ = ["DrawWalk"]


class DrawWalk:
    """The draws of one fleet budget checked in order, as they are read.

    Each draw must follow the chain; the money it took is summed per period
    (no period past the limit); the state it records is kept to compare
    with the budget's row at the end.

    Parameters
    ----------
    budget : FleetBudget
        The stored budget.
    row : Row
        The budget's row (its config starts the chain).
    digest : callable
        The chain's digest (SHA-256, or the store's HMAC).
    where : str
        The budget, for messages.
    """

    def __init__(self, budget, row, digest, where: str):
        self.budget, self.digest, self.where = budget, digest, where
        self.previous = _genesis(row.name, row.config, digest)
        self.spent: dict[str, float] = {}
        self.granted: dict[str, list] = {}
        self.state = recorded(budget.fleet_state(budget.initial_state()))
        self.n_draws = 0

    def _tol(self, amount: float) -> float:
        return 1e-9 * max(1.0, abs(amount))

    def add(self, r) -> None:
        """Check draw ``r`` (a row of ``skrbal_fleet_events``) and take it in."""
        expected = self.n_draws + 1
        at = f"{self.where}, table {schema.events.name}, event {r.seq}"
        if r.seq != expected:
            raise StoreError(f"{at}: expected event {expected}; one is missing.")
        digest = _hash(
            self.previous,
            r.seq,
            r.kind,
            r.agent,
            r.first_step,
            r.payload,
            r.created_at,
            self.digest,
        )
        if digest != r.hash:
            raise StoreError(f"{at}: its hash does not follow the chain.")
        self.previous, self.n_draws = r.hash, expected
        payload = json.loads(r.payload)
        self.granted.setdefault(r.agent, []).extend(payload["steps"])
        limit = self.budget.limit
        for period, amount in payload["taken"].items():
            total = self.spent.get(period, 0.0) + amount
            self.spent[period] = total
            if total > limit * (1 + 1e-9):
                raise StoreError(
                    f"{at}: period {period} spent {total!r}, over the limit {limit!r}."
                )
        self.state = payload["state"]
        if isinstance(self.state["spent"], dict):
            # A draw of an earlier version: its state holds every period.
            for period, amount in self.state["spent"].items():
                if abs(amount - self.spent.get(period, 0.0)) > self._tol(amount):
                    raise StoreError(
                        f"{at}: period {period} shows {amount!r} spent, its "
                        f"draws {self.spent.get(period, 0.0)!r}."
                    )

    def finish(self, row, row_state: dict) -> None:
        """The budget's row is the last draw's state, and its spend the draws'."""
        where = f"{self.where}, table {schema.budgets.name}"
        whole = isinstance(self.state["spent"], dict)
        if (
            row.last_seq != self.n_draws
            or recorded(row_state, whole_spend=whole) != self.state
        ):
            raise StoreError(
                f"{where}: its state or last event ({row.last_seq}) is not its "
                f"draws' ({self.n_draws})."
            )
        kept = row_state["spent"]
        clock = row_state["clock"]
        first_open = None if clock is None else self.budget.first_open_period(clock)
        for period in set(kept) | set(self.spent):
            open_ = whole or first_open is None or int(period) >= first_open
            ours, theirs = kept.get(period, 0.0), self.spent.get(period, 0.0)
            if open_ and abs(ours - theirs) > self._tol(theirs):
                raise StoreError(
                    f"{where}: period {period} shows {ours!r} spent, its draws "
                    f"{theirs!r}."
                )
