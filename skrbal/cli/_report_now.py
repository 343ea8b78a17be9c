"""The top of an agent's report: where it stands now, and why it asked.

An engineer opening the page first asks what the agent believes now, what
it recommends, how much money is left and whether anything is overdue; then,
for each inspection it requested, why (the value of the inspection against
its cost, and the belief at that step). This module writes those parts of
the page from what the report has already read (the status, the requests,
the history's display); values are escaped here, as in :mod:`._report`.
"""

from __future__ import annotations

import html

__all__ = ["NowPart", "belief_text"]


def _e(value) -> str:
    return html.escape(str(value), quote=True)


def _state_names(process) -> list[str]:
    """Each state's name, or its label when the process names none."""
    labels = [str(c) for c in process.classes_.tolist()]
    return list(process.state_names or labels)


def belief_text(belief, process) -> str:
    """A belief as ``healthy 0.93, damaged 0.05, severe 0.02`` (names, 2 digits).

    >>> from skrbal import DecisionProcess
    >>> process = DecisionProcess(
    ...     transition=[[[0.9, 0.1], [0.0, 1.0]]], state_utility=[0.0, -10.0],
    ...     action_utility=[0.0], inspection_cost=1.0, classes=["ok", "bad"])
    >>> belief_text([0.934, 0.066], process)
    'ok 0.93, bad 0.07'
    """
    return ", ".join(
        f"{name} {float(p):.2f}" for name, p in zip(_state_names(process), belief)
    )


class NowPart:
    """The page's "now" box and the reason of each request, for one agent.

    Parameters
    ----------
    status : dict
        The agent's status (:meth:`AgentStore.status`).
    process : DecisionProcess
        Its decision process.
    display : AgentHistoryDisplay
        Its history as the report read it (beliefs per step, requests).
    budget_lines : list of str
        The budget in words, with what is left this period.
    """

    def __init__(self, status, process, display, budget_lines):
        self.status, self.process, self.display = status, process, display
        self.budget_lines = budget_lines
        self._first = int(status["n_commissioning"])

    def belief_at(self, step: int):
        """The belief at observed ``step``, or None.

        The display holds the observed steps only, which follow the
        commissioning ones: step ``n_commissioning + i`` is its row ``i``.
        """
        import numpy as np

        beliefs, row = self.display.beliefs, step - self._first
        if not 0 <= row < len(beliefs):
            return None
        row = beliefs.iloc[int(row)].to_numpy(dtype=float)
        return None if np.isnan(row).any() else row  # NaN: not kept (old stores)

    def box(self, last_time: str, requests) -> str:
        """The "now" box: belief, recommended action, budget, overdue requests.

        ``requests`` are the agent's requests (:meth:`AgentStore.requests`).
        """
        n = len(self.display.beliefs)
        rows = []
        if n:
            belief = self.display.beliefs.iloc[n - 1].to_numpy(dtype=float)
            action = int(self.process.optimal_action(belief[None, :])[0])
            names = self.process.action_names
            named = names[action] if names is not None else f"action {action}"
            step = self._first + n - 1
            when = f" (step {step}" + (f", {last_time})" if last_time else ")")
            rows.append(("belief now" + when, _e(belief_text(belief, self.process))))
            waiting = int(self.status["n_open"])
            advice = _e(named)
            if waiting:
                advice += _e(f" (on the belief alone; {waiting} inspection(s) asked "
                             "for are waiting: act on their results)")  # fmt: skip
            rows.append(("recommended action now", f"<strong>{advice}</strong>"))
        for line in self.budget_lines[1:]:
            text = _e(line.strip())
            if "exhausted" in line:
                text = f'<span class="warning">{text}</span>'
            rows.append(("budget left", text))
        overdue = requests.loc[requests["status"] == "expired", "request_id"]
        if len(overdue):
            ids = ", ".join(str(i) for i in overdue.tolist()[:10])
            more = ", ..." if len(overdue) > 10 else ""
            rows.append(
                (
                    "overdue requests",
                    f'<span class="warning">{len(overdue)} request(s) past their '
                    f"timeout without a result ({_e(ids)}{more}): see "
                    "<em>Requests waiting for a result</em></span>",
                )
            )
        else:
            rows.append(("overdue requests", "none"))
        body = "".join(f"<tr><th>{_e(k)}</th><td>{v}</td></tr>" for k, v in rows)
        return f'<table class="now"><tbody>{body}</tbody></table>'

    def why(self, row) -> tuple[str, str]:
        """Why request ``row`` was asked: its value against its cost, the belief."""
        cost = self._cost(row)
        value = float(row.evpi)
        kind = "EVSI" if getattr(row, "method", None) else "EVPI"
        if cost is None or value != value:
            reason = f"{kind} {value:.4g}" if value == value else ""
        else:
            reason = f"{kind} {value:.4g} {'>' if value > cost else '<='} cost {cost:g}"
        belief = self.belief_at(int(row.step))
        return reason, "" if belief is None else belief_text(belief, self.process)

    def _cost(self, row):
        requests = self.display.requests
        if "cost" not in requests.columns:
            return None
        mine = requests.loc[requests["request_id"] == row.request_id, "cost"]
        return float(mine.iloc[0]) if len(mine) else None
