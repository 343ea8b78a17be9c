"""``skrbal agent init`` and ``process-template``: commissioning an agent.

The options of ``init`` (the commissioning data or case, the model and its
prior, the budget and the request timeout) checked and turned into a
:class:`~skrbal.online.RiskBasedAgent`, and what ``init`` prints about it; and
the template of the decision process that ``init --process`` reads.
"""

from __future__ import annotations

import json
import sys

import numpy as np
import pandas as pd

from skrbal.cli._agent import CASE_FEATURES
from skrbal.cli._agent_store import guarded, new_store
from skrbal.cli._data import (
    CAMPAIGN_COLUMNS,
    given_options,
    read_campaign,
    read_class_priors,
    read_inspections,
    read_process,
)
from skrbal.cli._output import check_output, write_output
from skrbal.cli._time_options import duration, time_point

__all__ = ["init", "process_template", "process_text"]


def _budget_policy(args, first_time: float, steps: bool = False):
    """The policy of the budget options (None: the paper's rule)."""
    from skrbal.budget import (
        CostThreshold,
        MinimumGap,
        PacedBudget,
        QuantileThreshold,
        SpendCap,
    )

    if args.spend_cap is not None and args.paced is not None:
        raise ValueError("--spend-cap and --paced exclude each other")
    if args.paced is not None and args.rate is not None:
        raise ValueError("--paced and --rate exclude each other")
    money = args.paced if args.paced is not None else args.spend_cap
    if (money is None) != (args.period is None):
        raise ValueError("--period goes with --spend-cap or --paced")
    if args.origin is not None and args.period is None:
        raise ValueError("--origin goes with --period (and --spend-cap or --paced)")
    origin = None
    if args.period is not None:
        period = duration(args.period, "--period", steps)
        origin = (
            first_time if args.origin is None else time_point(args.origin, "--origin")
        )
    if args.paced is not None:
        policies = [PacedBudget(limit=args.paced, period=period, origin=origin)]
    else:
        policies = [
            CostThreshold() if args.rate is None else QuantileThreshold(rate=args.rate)
        ]
    if args.spend_cap is not None:
        policies.append(SpendCap(limit=args.spend_cap, period=period, origin=origin))
    if args.min_gap is not None:
        policies.append(MinimumGap(gap=duration(args.min_gap, "--min-gap", steps)))
    if len(policies) == 1 and args.rate is None and args.paced is None:
        return None
    policy = policies[0]
    for other in policies[1:]:
        policy = policy & other
    # Check the parameters now, not at the first observation.
    try:
        policy.initial_state()
    except ValueError as exc:
        raise ValueError(f"budget options: {exc}") from None
    return policy


def _commissioning(args):
    """Process, features, labels, times and actions of the commissioning."""
    from skrbal.experiments import get_case_study

    if args.case:
        case = get_case_study(args.case)
        split = case.split(random_state=args.seed)
        names = CASE_FEATURES[args.case]
        initial = split.initial_indices
        X = pd.DataFrame(split.X_stream[initial], columns=names)
        return case, case.process(), X, split.y_stream[initial], None, None, split
    if args.data is None:
        raise ValueError("--process needs --data, the commissioning campaign file")
    process = read_process(args.process)
    # Rows without a label after the labelled ones are observed (commission).
    campaign = read_campaign(args, process, unlabelled=True)
    X = pd.DataFrame(campaign.X, columns=campaign.feature_names)
    # Actions only when the file has them: else the agent's own are kept.
    has_actions = args.action_column is not None or "action" in _columns(args.data)
    actions = campaign.actions if has_actions else None
    times = campaign.time
    if times is not None and campaign.time_zoned:
        # Kept zoned: the agent then refuses naive times (read as UTC).
        times = pd.DatetimeIndex(times).tz_localize("UTC")
    if times is not None:
        # Named: the agent keeps its time column, which observe then reads.
        times = pd.Series(times, name=args.time_column or "time")
    return None, process, X, campaign.y, times, actions, None


def _columns(path) -> list[str]:
    """The column names of a campaign file (read again: cheap, and exact)."""
    if str(path).lower().endswith((".parquet", ".pq")):
        import pyarrow.parquet as pq

        return list(pq.read_schema(path).names)
    return list(pd.read_csv(path, nrows=0, skipinitialspace=True).columns)


def _estimator(method, case, args, classes):
    """The method's model; a mixture's prior set by --prior (or the source) and
    --class-priors."""
    estimator = method.estimator(case)
    prior = args.prior or ("paper" if args.case else "data")
    has_prior = "mean_prior" in estimator.get_params()
    if args.prior is not None and not has_prior:
        raise ValueError(
            f"--prior sets the prior of a Gaussian mixture; --method {args.method} "
            "has none"
        )
    if has_prior and prior == "data":
        estimator.set_params(mean_prior="data", covariance_prior="data")
    elif has_prior and not args.case:
        # The paper's unit prior on the user's own features: left unset (it is
        # the default), so that it is checked against their scale and a
        # PriorScaleWarning says when it does not fit. A built-in case keeps it
        # pinned, as the paper's reproductions do.
        estimator.set_params(mean_prior=None, covariance_prior=None)
    if args.class_priors is not None:
        if "class_priors" not in estimator.get_params():
            raise ValueError(
                "--class-priors states a Gaussian mixture's prior (gmm-* "
                f"methods); --method {args.method} has none"
            )
        estimator.set_params(class_priors=read_class_priors(args.class_priors, classes))
    return estimator


# Without a budget period, a timed agent's requests expire after 30 days.
_DEFAULT_TIMEOUT = 30 * 86400.0


def _request_timeout(args, times) -> float | None:
    """--request-timeout, or its default: the budget's period, else 30 days.

    An unanswered request must not blind the agent for ever: by default it
    expires after one budget period (the money it held is the period's), or
    30 days for a timed agent without a period; 'none' keeps it open.
    """
    given = args.request_timeout
    if given is not None and given.strip().lower() == "none":
        return None
    if given is not None:
        timeout = duration(given, "--request-timeout", times is None)
        if timeout <= 0:
            raise ValueError("--request-timeout must be > 0")
        return timeout
    if args.period is not None:
        return duration(args.period, "--period", times is None)
    return None if times is None else _DEFAULT_TIMEOUT


def _timeout_text(timeout, times) -> str:
    from skrbal.cli._budget_words import duration_words

    if timeout is None:
        return "; requests wait for their result without end"
    clock = "step" if times is None else "timestamp"
    return (
        f"; a request without a result expires after "
        f"{duration_words(timeout, clock)} (--request-timeout)"
    )


def _check_init_options(args) -> None:
    given = given_options(args, ("data", *CAMPAIGN_COLUMNS))
    if args.case and given:
        verb = "goes" if len(given) == 1 else "go"
        raise ValueError(f"{' and '.join(given)} {verb} with --process, not --case")
    if args.process and args.stream_out is not None:
        raise ValueError("--stream-out goes with --case")
    if args.stream_out is not None:
        check_output(args.stream_out, "--stream-out")
    if args.max_open_requests is not None and args.max_open_requests < 1:
        raise ValueError("--max-open-requests must be >= 1")
    if not 0.0 <= args.history_prior <= 1.0:
        raise ValueError(f"--history-prior must be in [0, 1], got {args.history_prior}")


@guarded
def init(args) -> int:
    from skrbal.experiments import get_method
    from skrbal.online import RiskBasedAgent

    _check_init_options(args)
    case, process, X, y, times, actions, split = _commissioning(args)
    to_file = True
    # Budget periods start with the commissioning, unless --origin says.
    first_time = 0.0 if times is None else time_point(str(times.iloc[0]), "--data")
    budget = _budget_policy(args, first_time, steps=times is None)
    inspections = None
    if args.inspections is not None:
        inspections = read_inspections(args.inspections)
    timeout = _request_timeout(args, times)
    method = get_method(args.method)
    estimator = _estimator(method, case, args, process.classes)
    with new_store(args) as store:
        agent = RiskBasedAgent(
            estimator=estimator,
            process=process,
            budget=budget,
            semi_supervised=method.learner_params.get("semi_supervised"),
            max_open_requests=args.max_open_requests,
            request_timeout=timeout,
            inspections=inspections,
            history_prior=args.history_prior,
            store=store,
            name=args.agent,
        )
        try:
            try:
                agent.fit(X, y, timestamps=times)
            except ValueError as exc:
                # A message about a parameter the user gave names its option.
                given = {"name must": "--agent"}
                if args.class_priors is not None:
                    given["class_priors"] = "--class-priors"
                for start, option in given.items():
                    if str(exc).startswith(start):
                        raise ValueError(f"{option}: {exc}") from None
                raise
            summary = agent.status()
            # The commissioning rows are the agent's first steps.
            for step, action in enumerate([] if actions is None else actions):
                agent.record_action(step, int(action))
        finally:
            agent.close()
        if split is not None and args.stream_out is not None:
            initial = split.initial_indices
            rest = np.setdiff1d(np.arange(split.X_stream.shape[0]), initial)
            stream = pd.DataFrame(split.X_stream[rest], columns=list(X.columns))
            stream["label"] = split.y_stream[rest]
            to_file = write_output(
                args.stream_out, stream.to_csv(index=False), option="--stream-out"
            )
    # Messages cannot go where the stream went (stdout, /dev/stdout).
    note = sys.stderr if args.stream_out is not None and not to_file else sys.stdout
    print(
        f"agent {args.agent!r} commissioned in {agent.store_.display_url} with "
        f"{summary['n_commissioning']} labelled observations of {X.shape[1]} "
        f"features{_commissioning_rows(args, summary, agent.estimator)}; model "
        f"{type(agent.estimator_).__name__}{_stated_text(agent.estimator)}, budget "
        + _budget_in_words(budget, times)
        + _timeout_text(timeout, times),
        file=note,
    )
    _print_observed(summary, note)
    if args.stream_out is not None:
        print(
            f"wrote the stream ({len(rest)} observations) to {args.stream_out}",
            file=note,
        )
    return 0


def _budget_in_words(budget, times) -> str:
    """The policy as init prints it: in words, as status and report do."""
    from skrbal._fingerprint import encode_config
    from skrbal.cli._budget_words import budget_words

    config = None if budget is None else encode_config(budget)
    if times is None:
        return budget_words(config, "step")
    return budget_words(config, "timestamp", np.asarray(times).dtype.kind in "MO")


def _rows_text(first: int, last: int) -> str:
    return f"row {first}" if first == last else f"rows {first} to {last}"


def _commissioning_rows(args, status: dict, estimator) -> str:
    """Which rows of --data commissioned the agent: the leading labelled ones."""
    if args.data is None:
        return ""
    n = status["n_commissioning"]
    text = f" ({_rows_text(0, n - 1)} of {args.data}, counted from 0"
    if status["n_observations"]:
        # The first unlabelled row ends the commissioning set.
        text += f": the labelled rows up to the first without a label, row {n}"
        prior = estimator.get_params(deep=False).get("mean_prior")
        if isinstance(prior, np.ndarray):  # pinned from every row
            text += "; the prior's scale from every row of the file"
    return text + ")"


def _stated_text(estimator) -> str:
    """The states whose place --class-priors stated, as init names them."""
    stated = estimator.get_params(deep=False).get("class_priors")
    if not stated:
        return ""
    return f" (damage stated for {', '.join(map(str, stated))} (--class-priors))"


def _print_observed(status: dict, note) -> None:
    """What init did with the rows after the first unlabelled one."""
    if status["n_observations"]:
        n, later = status["n_commissioning"], status["n_observations"]
        print(
            f"then observed the {later} later rows ({_rows_text(n, n + later - 1)}) "
            "in order: "
            f"{status['n_requests']} inspection(s) requested, "
            f"{status['n_results']} of them answered by the file's labels, "
            f"{status['n_routine']} routine label(s) recorded",
            file=note,
        )


def process_text(process) -> str:
    """A process as JSON for people: one line per entry, one per matrix row."""
    entries = []
    for key, value in process.to_dict().items():
        if key == "transition":
            matrices = ",\n".join(
                "    [\n"
                + ",\n".join(f"      {json.dumps(row)}" for row in matrix)
                + "\n    ]"
                for matrix in value
            )
            entries.append(f'  "transition": [\n{matrices}\n  ]')
        else:
            entries.append(f"  {json.dumps(key)}: {json.dumps(value)}")
    return "{\n" + ",\n".join(entries) + "\n}\n"


def process_template(args) -> int:
    from skrbal import synthetic_decision_process

    if write_output(args.out, process_text(synthetic_decision_process())):
        print(f"wrote a decision process to {args.out}: edit it into yours")
    return 0
