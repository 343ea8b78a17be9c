"""The parameters of a campaign that the stream learner and the agent share.

Both drivers take the same eleven parameters (the process, the budget
policy, the inspection methods, the update rule and its options, the cap on
open requests, how pending requests count, the request timeout, the history's
share in the class prior); one
:class:`CampaignParams` read from either checks them
(:func:`check_campaign_params`) and makes the :class:`Campaign`, so a
parameter added to one driver cannot be forgotten by the other.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from skrbal._learning._campaign import Campaign, check_campaign_params

__all__ = ["CampaignParams"]


@dataclass(frozen=True)
class CampaignParams:
    """The shared parameters of a learner or an agent, as one value.

    Parameters
    ----------
    process : DecisionProcess
    budget : BudgetPolicy or None, default=None
        As resolved by the driver (its own default, or ``None`` for the
        campaign's :class:`~skrbal.budget.CostThreshold`).
    inspections, semi_supervised, update, em_start, initial_state,
    max_open_requests, pending_value, request_timeout, history_prior
        As :class:`~skrbal.active.RiskBasedLearner` and
        :class:`~skrbal.online.RiskBasedAgent` take them.

    Examples
    --------
    >>> from skrbal import synthetic_decision_process
    >>> from skrbal._learning import CampaignParams
    >>> params = CampaignParams(synthetic_decision_process(), max_open_requests=2)
    >>> params.check().campaign().kernel.max_open_requests
    2
    """

    process: Any
    budget: Any = None
    inspections: Any = None
    semi_supervised: str | None = None
    update: str = "auto"
    em_start: str = "labelled"
    initial_state: Any = None
    max_open_requests: int | None = None
    pending_value: str = "fantasy"
    request_timeout: float | None = None
    history_prior: float = 0.0

    @classmethod
    def of(cls, driver, **given) -> CampaignParams:
        """The shared parameters of a driver (its attributes), some ``given``.

        Parameters
        ----------
        driver : RiskBasedLearner or RiskBasedAgent
        **given
            Values that replace the driver's (the resolved ``budget``, ...).

        Returns
        -------
        params : CampaignParams
        """
        names = [f.name for f in fields(cls)]
        return cls(**{n: given[n] if n in given else getattr(driver, n) for n in names})

    def check(self) -> CampaignParams:
        """Name any invalid parameter; return the parameters.

        Returns
        -------
        self : CampaignParams
        """
        params = {f.name: getattr(self, f.name) for f in fields(self)}
        del params["initial_state"]  # checked against the model's classes
        check_campaign_params(**params)
        return self

    def campaign(
        self, *, follow_up: bool = False, history_filter: bool = False
    ) -> Campaign:
        """A new campaign with these parameters.

        Parameters
        ----------
        follow_up : bool, default=False
            Follow an imperfect report up with a perfect inspection where it
            warrants one (:class:`~skrbal._learning.DecisionKernel`); the
            stream learner's option, not yet the agent's (whose stored
            settings are these parameters).
        history_filter : bool, default=False
            With ``history_prior``, a forward filter of the stream
            (:class:`~skrbal._learning._history.HistoryPrior`'s
            ``filtering``); the stream learner's option, not yet the agent's.

        Returns
        -------
        campaign : Campaign
        """
        params = {f.name: getattr(self, f.name) for f in fields(self)}
        return Campaign(
            params.pop("process"),
            follow_up=follow_up,
            history_filter=history_filter,
            **params,
        )
