"""A fleet commissioned one structure after another: shared strength against alone.

Issue 29's study of :class:`~skrbal.mixture.PooledGMMClassifier`. Each
repetition generates one fleet (:func:`skrbal.datasets.make_fleet`, every
structure as hard as the ``'z24-hard'`` case study: many cold spells, damage
that comes at once; a few structures whose damage lowers other modes) and
commissions its structures one after another, in the generator's order, each
**on healthy data alone**: its first ``--commissioning`` (50) observations in
the healthy state (1) are labelled, nothing else. Each structure's stream is
its whole record, decided by :class:`~skrbal.active.RiskBasedLearner` with the
Z24 decision process, not told of the record's repair; ``--tell-repairs``
gives both arms' learners the record's actions (``fit(..., actions=)``, as an
owner records them), and the labels taken before the repair then count in
the class weights as the repair left their state: under the plain rule it
cuts inspections (shared 0.44 of alone's against 0.52) and false repairs,
but under the budget the structures whose damage looks different lose 7 %
against alone (``results/fleet_repairs.md``), so the judged arms stay
untold. Two arms see the same data:

- ``alone``: ``PooledGMMClassifier()`` without a fleet, which is the Bayesian
  GMM on features standardised by the structure's own commissioning window
  (``'z24-hard'``'s standardisation);
- ``shared``: ``PooledGMMClassifier(fleet=...)`` with the
  :class:`~skrbal.mixture.FleetPrior` learned from the labels the earlier
  structures of the same arm (and policy) had at the end of their records
  (their commissioning windows and their inspections' results; nothing else).
  The first two structures have no fleet yet (a fleet prior needs two). Its
  learner also passes the structure's own unlabelled steps
  (``semi_supervised='em'``, each step weighted ``--unlabelled-weight``),
  which shape its healthy class; ``--shared-labels-only`` gives the shared
  arm of earlier sessions, which learned from the labels alone. Its model's
  ``mean_precision_prior`` is ``--shared-mean-precision`` (1, the model's
  default and the alone arm's): the broad component is the fallback of a
  state unlike the fleet's, and with the weight of one observation at the
  healthy centre it stretches a damage state back over the healthy one, so
  after a repair healthy steps keep asking for inspections. 0.1 asks about a
  tenth fewer for about a tenth more regret, and under a budget the
  structures whose damage looks different then lose 11 % against alone
  (``results/fleet_precision01.md``); 1 keeps them within the issue's 5 %.

and two policies: ``evpi``, the plain rule (inspect when EVPI exceeds the
cost), and ``paced``, :class:`~skrbal.budget.PacedBudget` with money for 25 %
of the inspections the ``alone`` arm's plain rule asked on that structure (at
least one) over its record, **the same budget for both arms**.

Measured per structure: inspections, regret (perfect-information utility minus
realised utility), false repairs (share of undamaged steps, states 1 and 2,
whose action was not "do nothing"), whether damage was inspected, steps from
the onset to the first damaged inspection, and the fleet component's weight
(transfer strength) of each state at the end. The table gives, for the k-th
structure commissioned (k = 1, 5, 10, 20, 30) and for all structures from the
10th on, the means over repetitions per arm, the ratios shared / alone, and
the share of structures where shared had no higher regret (paired); then the
structures unlike the fleet, alone against shared.

Run (from the repository root; writes ``benchmarks/results/fleet.md`` and the
per-structure table ``fleet_runs.csv``)::

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_fleet.py --repeats 50 \\
        --structures 30 --jobs 1

Goals (issue 29): from the 10th structure on, at most a third of the
inspections and a tenth of the false repairs of ``alone``, for the same or
lower regret, damage inspected at least as soon after onset; on the
structures unlike the fleet, regret with shared strength within 5 % of alone.
"""

from __future__ import annotations

import argparse
import math
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from joblib import Parallel, delayed

from skrbal import z24_decision_process
from skrbal.active import RiskBasedLearner
from skrbal.budget import PacedBudget
from skrbal.datasets import make_fleet
from skrbal.mixture import FleetPrior, PooledGMMClassifier

RESULTS = Path(__file__).parent / "results"
CLASSES = (1, 2, 3, 4)
DAMAGED = (3, 4)
ARMS = ("alone", "shared")
POLICIES = ("evpi", "paced")
#: The paced budget: this share of the alone arm's plain-rule inspections.
FRACTION = 0.25
ORDERS = (1, 5, 10, 20, 30)
#: Weight of one of the shared arm's unlabelled steps (its model's default).
UNLABELLED_WEIGHT = 0.02
#: ``mean_precision_prior`` of the shared arm's broad component: how many
#: observations the prior of a state's mean at the healthy centre is worth.
#: At 1 (the model's default, the alone arm's), a damage state whose own
#: labels left the fleet's component stretches back over the healthy state,
#: and after a repair every healthy step looked 3-5 % advanced damage; 0.1
#: cuts those inspections but costs the unlike structures under a budget.
SHARED_MEAN_PRECISION = 1.0


def seed_of(seed: int, repetition: int) -> int:
    """Seed of one repetition, independent of scheduling and worker count."""
    return int(np.random.SeedSequence([seed, repetition]).generate_state(1)[0])


def undamaged_in_hindsight(structure, labelled: np.ndarray) -> np.ndarray:
    """Steps an owner knows to have been undamaged once the record is over.

    Damage persists until a repair, so within each period that starts at the
    record's start or after a recorded repair, every step up to the last
    inspection that found the structure undamaged, before the period's first
    damaged label and its end, was undamaged. Which undamaged class a step is
    in (1 normal, 2 cold) is the sign of the deck temperature, which the
    owner measures. Nothing else is used.
    """
    y = structure.y
    repairs = np.flatnonzero(structure.actions)
    starts = np.r_[0, repairs + 1]
    ends = np.r_[repairs, y.shape[0]]
    known = []
    for start, end in zip(starts.tolist(), ends.tolist()):
        inside = labelled[(labelled >= start) & (labelled < end)]
        damaged = inside[np.isin(y[inside], DAMAGED)]
        if damaged.size:
            inside = inside[inside < damaged[0]]
        if inside.size:
            known.append(np.arange(start, int(inside[-1]) + 1))
    steps = np.concatenate(known) if known else np.zeros(0, dtype=np.intp)
    undamaged = np.where(structure.temperature[steps] < 0.0, 2, 1)
    # The rule relies on the generator's persistent damage: checked, not assumed.
    if not np.array_equal(undamaged, y[steps]):
        raise AssertionError("hindsight labelled a damaged step undamaged")
    return steps


#: Where a step lies in a structure's record (:func:`phases`).
PHASES = ("first 300", "healthy", "after repair", "damaged")


def phases(structure) -> np.ndarray:
    """The phase of each step: where inspections and false repairs come from.

    ``'damaged'``: a damaged step (states 3 and 4); ``'after repair'``: an
    undamaged step after the recorded repair; ``'first 300'``: an undamaged
    step among the first 300 of the record (the first weeks after
    commissioning); ``'healthy'``: any other undamaged step (before the
    onset, or on a structure never damaged).
    """
    n = structure.y.shape[0]
    phase = np.full(n, "healthy", dtype=object)
    phase[:300] = "first 300"
    if structure.repair is not None:
        phase[structure.repair + 1 :] = "after repair"
    phase[np.isin(structure.y, DAMAGED)] = "damaged"
    return phase


#: A spike: a step this many commissioning-window standard deviations
#: from the median of the 13 steps around it, in some feature (about 1 % of
#: the undamaged steps: the identification noise's heavy tail).
SPIKE = 5.0


def spikes(structure, window: int = 50) -> np.ndarray:
    """Steps that stand out from their neighbours: single-step noise outliers."""
    X = pd.DataFrame(structure.X)
    median = X.rolling(13, center=True, min_periods=1).median()
    scale = X.iloc[np.flatnonzero(structure.y == CLASSES[0])[:window]].std()
    return ((X - median).abs() / scale).max(axis=1).to_numpy() > SPIKE


def phase_counts(structure, inspected, actions) -> dict:
    """Inspections and false repairs per phase, on cold and on spiky steps."""
    phase = phases(structure)
    undamaged = ~np.isin(structure.y, DAMAGED)
    false = (actions != 0) & undamaged
    cold = structure.y == 2
    spiky = spikes(structure) & undamaged
    counts = {}
    for name in PHASES:
        inside = phase == name
        counts[f"inspections {name}"] = int((inspected & inside).sum())
        if name != "damaged":
            counts[f"false repairs {name}"] = int((false & inside).sum())
    counts["inspections cold"] = int((inspected & cold).sum())
    counts["false repairs cold"] = int((false & cold).sum())
    counts["inspections spike"] = int((inspected & spiky).sum())
    counts["false repairs spike"] = int((false & spiky).sum())
    counts["undamaged spikes"] = int(spiky.sum())
    return counts


def measure(
    learner, structure, initial, hindsight: bool = False, tell_repairs: bool = False
) -> dict:
    """Run ``learner`` on a structure's record and measure the run.

    ``tell_repairs``: the learner is given the record's actions (the owner's
    repair), as ``fit(..., actions=)``.
    """
    X, y = structure.X, structure.y
    actions = structure.actions if tell_repairs else None
    learner.fit(X, y, initial=initial, actions=actions)
    steps, totals = learner.history_.steps, learner.history_.totals
    damaged = np.isin(y, DAMAGED)
    inspected = steps["inspected"].to_numpy(bool)
    actions = steps["action"].to_numpy()
    found = np.flatnonzero(inspected & damaged)
    acted = np.flatnonzero((actions != 0) & damaged)
    onset = structure.onset
    labelled = np.union1d(initial, np.flatnonzero(inspected))
    if hindsight:
        labelled = np.union1d(labelled, undamaged_in_hindsight(structure, labelled))
    weights = getattr(learner.estimator_, "transfer_weight_", np.zeros(len(CLASSES)))
    return {
        "n_inspections": int(totals["n_inspections"]),
        "regret": float(totals["regret"]),
        "false_repair": float((actions[~damaged] != 0).mean()),
        "damage_found": bool(found.size),
        "delay": float(found[0] - onset) if found.size else np.nan,
        "damage_acted": bool(acted.size),
        "act_delay": float(acted[0] - onset) if acted.size else np.nan,
        "damaged_acted_share": float((actions[damaged] != 0).mean())
        if damaged.any()
        else np.nan,
        **{f"transfer_{c}": float(w) for c, w in zip(CLASSES, weights)},
        **phase_counts(structure, inspected, actions),
        "_labelled": (X[labelled], y[labelled]),
    }


def run_repetition(
    repetition: int,
    *,
    n_structures: int,
    n_samples: int,
    seed: int = 0,
    n_commissioning: int = 50,
    hindsight: bool = False,
    shared_unlabelled: bool = True,
    unlabelled_weight: float = UNLABELLED_WEIGHT,
    policies: tuple[str, ...] = POLICIES,
    shared_mean_precision: float = SHARED_MEAN_PRECISION,
    tell_repairs: bool = False,
    learner_params: dict | None = None,
    learner_arms: tuple[str, ...] = ARMS,
) -> list[dict]:
    """Commission one fleet's structures in order, every arm and policy.

    ``policies`` in the order of :data:`POLICIES`: ``'paced'`` takes its budget
    from the ``'evpi'`` run of the ``alone`` arm, so it needs ``'evpi'``.
    """
    if "paced" in policies and "evpi" not in policies:
        raise ValueError("the paced policy's budget comes from the plain rule's run")
    policies = tuple(p for p in POLICIES if p in policies)
    warnings.simplefilter("ignore")  # UnlabelledClassesWarning at every start
    rng_seed = seed_of(seed, repetition)
    fleet = make_fleet(n_structures, n_samples=n_samples, random_state=rng_seed)
    process = z24_decision_process()
    cost = float(process.inspection_cost)
    known = {(arm, policy): [] for arm in ARMS for policy in policies}
    rows = []
    for k, structure in enumerate(fleet.structures, start=1):
        initial = np.flatnonzero(structure.y == CLASSES[0])[:n_commissioning]
        budget = None
        for policy in policies:
            for arm in ARMS:
                records = known[arm, policy]
                fleet_prior = None
                if arm == "shared" and len(records) >= 2:
                    fleet_prior = FleetPrior.from_structures(
                        records, classes=CLASSES, window=n_commissioning
                    )
                estimator = PooledGMMClassifier(
                    fleet=fleet_prior, classes=CLASSES, window=n_commissioning
                )
                if arm == "shared":
                    estimator.set_params(
                        unlabelled_weight=unlabelled_weight,
                        mean_precision_prior=shared_mean_precision,
                    )
                policy_params = {}
                if policy == "paced":
                    policy_params["budget"] = PacedBudget(
                        limit=budget * cost, period=float(n_samples)
                    )
                if arm == "shared" and shared_unlabelled:
                    # The learner refits on every observation so far, the
                    # unlabelled ones marked -1 (its semi-supervised mode).
                    policy_params["semi_supervised"] = "em"
                learner = RiskBasedLearner(
                    estimator=estimator,
                    process=process,
                    random_state=rng_seed,
                    **policy_params,
                    **((learner_params or {}) if arm in learner_arms else {}),
                )
                record = measure(learner, structure, initial, hindsight, tell_repairs)
                records.append(record.pop("_labelled"))
                if policy == "evpi" and arm == "alone":
                    budget = max(
                        1, math.floor(FRACTION * record["n_inspections"] + 0.5)
                    )
                rows.append(
                    {
                        "repetition": repetition,
                        "k": k,
                        "asset": structure.asset,
                        "arm": arm,
                        "policy": policy,
                        "damaged": structure.onset is not None,
                        "unlike": structure.unlike,
                        "budget": budget if policy == "paced" else np.nan,
                        **record,
                    }
                )
    return rows


def _cell(group: pd.DataFrame) -> dict | None:
    if group.empty:
        return None
    alone = group[group["arm"] == "alone"].set_index(["repetition", "k"])
    shared = group[group["arm"] == "shared"].set_index(["repetition", "k"])
    shared = shared.loc[alone.index]
    damaged = alone["damaged"]

    def ratio(column):
        a, s = alone[column].mean(), shared[column].mean()
        return s / a if a > 0 else (np.nan if s > 0 else 1.0)

    return {
        "n": len(alone),
        "inspections alone": alone["n_inspections"].mean(),
        "inspections shared": shared["n_inspections"].mean(),
        "inspections ratio": ratio("n_inspections"),
        "false repair alone %": 100 * alone["false_repair"].mean(),
        "false repair shared %": 100 * shared["false_repair"].mean(),
        "false repair ratio": ratio("false_repair"),
        "regret alone": alone["regret"].mean(),
        "regret shared": shared["regret"].mean(),
        "regret ratio": ratio("regret"),
        "shared regret <= alone %": 100
        * (shared["regret"] <= alone["regret"] + 1e-9).mean(),
        "found alone %": 100 * alone.loc[damaged, "damage_found"].mean(),
        "found shared %": 100 * shared.loc[damaged, "damage_found"].mean(),
        "delay alone": alone.loc[damaged, "delay"].median(),
        "delay shared": shared.loc[damaged, "delay"].median(),
        "shared found no later %": 100
        * (
            shared.loc[damaged, "delay"].fillna(np.inf)
            <= alone.loc[damaged, "delay"].fillna(np.inf)
        ).mean(),
        "acted alone %": 100 * alone.loc[damaged, "damage_acted"].mean(),
        "acted shared %": 100 * shared.loc[damaged, "damage_acted"].mean(),
        "act delay alone": alone.loc[damaged, "act_delay"].median(),
        "act delay shared": shared.loc[damaged, "act_delay"].median(),
        "shared acted no later %": 100
        * (
            shared.loc[damaged, "act_delay"].fillna(np.inf)
            <= alone.loc[damaged, "act_delay"].fillna(np.inf)
        ).mean(),
        "damaged steps acted alone %": 100
        * alone.loc[damaged, "damaged_acted_share"].mean(),
        "damaged steps acted shared %": 100
        * shared.loc[damaged, "damaged_acted_share"].mean(),
    }


def summarise(runs: pd.DataFrame, n_structures: int) -> str:
    """The markdown tables: by commissioning order, and the unlike structures."""
    lines = []
    orders = [k for k in ORDERS if k <= n_structures]
    for policy in [p for p in POLICIES if p in set(runs["policy"])]:
        part = runs[runs["policy"] == policy]
        cells = {f"k = {k}": _cell(part[part["k"] == k]) for k in orders}
        cells["k >= 10"] = _cell(part[part["k"] >= 10])
        cells["unlike, all k"] = _cell(part[part["unlike"]])
        cells["unlike, k >= 10"] = _cell(part[part["unlike"] & (part["k"] >= 10)])
        table = pd.DataFrame({k: v for k, v in cells.items() if v is not None})
        lines += [f"## Policy `{policy}`", "", _markdown(table), ""]
        pooled = part[(part["arm"] == "shared") & (part["k"] >= 3)]
        weights = pooled.groupby(np.where(pooled["unlike"], "unlike", "like"))[
            [f"transfer_{c}" for c in CLASSES]
        ].mean()
        lines += [
            "Mean transfer strength (posterior weight of the fleet's component) "
            "of each state at the end of the record, shared arm, structures "
            "with a fleet (k >= 3):",
            "",
            _markdown(weights),
            "",
        ]
        if "inspections healthy" in part.columns and (part["k"] >= 10).any():
            lines += [
                "Where the inspections and false repairs of the structures from "
                "the 10th on fall (mean per structure; phases of `phases`: "
                "undamaged steps among the record's first 300, other undamaged "
                "steps before any damage, undamaged steps after the recorded "
                "repair, damaged steps; cold = undamaged steps below 0 degC; "
                f"spike = undamaged steps {SPIKE:g} window standard deviations "
                "from the median of the 13 steps around them, in some feature):",
                "",
                _markdown(phase_table(part[part["k"] >= 10])),
                "",
            ]
    return "\n".join(lines)


def phase_table(part: pd.DataFrame) -> pd.DataFrame:
    """Mean inspections and false repairs per phase, per arm, and the ratio."""
    columns = [
        f"{what} {name}"
        for what in ("inspections", "false repairs")
        for name in (*PHASES, "cold", "spike")
        if f"{what} {name}" in part.columns
    ]
    means = part.groupby("arm")[columns].mean().T
    means["ratio"] = means["shared"] / means["alone"]
    return means[["alone", "shared", "ratio"]]


def _markdown(table: pd.DataFrame) -> str:
    header = "| | " + " | ".join(map(str, table.columns)) + " |"
    rule = "|---" * (len(table.columns) + 1) + "|"
    rows = [
        f"| {index} | "
        + " | ".join(
            "-"
            if pd.isna(v)
            else (
                f"{v:.3g}"
                if isinstance(v, float) and not (v.is_integer() and v >= 1000)
                else str(int(v) if isinstance(v, float) else v)
            )
            for v in row
        )
        + " |"
        for index, row in zip(table.index, table.itertuples(index=False))
    ]
    return "\n".join([header, rule, *rows])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--structures", type=int, default=30)
    parser.add_argument("--samples", type=int, default=3932)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--commissioning", type=int, default=50)
    parser.add_argument(
        "--fleet-record",
        choices=("hindsight", "labels"),
        default="labels",
        help="what an earlier structure gives the fleet: its labels, or its "
        "labels and the undamaged steps known in hindsight",
    )
    parser.add_argument(
        "--shared-labels-only",
        dest="shared_unlabelled",
        action="store_false",
        help="the shared arm learns from the labels alone (the judged arm of "
        "earlier sessions); by default its learner also passes the structure's "
        "unlabelled steps (semi_supervised='em'), which shape its healthy class",
    )
    parser.add_argument(
        "--unlabelled-weight",
        type=float,
        default=UNLABELLED_WEIGHT,
        help="the weight of an unlabelled step in the shared arm",
    )
    parser.add_argument(
        "--shared-mean-precision",
        type=float,
        default=SHARED_MEAN_PRECISION,
        help="mean_precision_prior of the shared arm's model (the alone arm "
        "keeps the model's default, 1)",
    )
    parser.add_argument(
        "--policies",
        nargs="+",
        choices=POLICIES,
        default=list(POLICIES),
        help="the policies to run ('paced' needs 'evpi', whose alone run sets "
        "its budget)",
    )
    parser.add_argument(
        "--tell-repairs",
        action="store_true",
        help="both arms' learners are given the record's actions, fit(..., "
        "actions=), so the labels taken before the repair count as the repair "
        "left their state (results/fleet_repairs.md: better under the plain "
        "rule, but under the budget the unlike structures lose 7 %% against "
        "alone); by default they are not told, the judged arms",
    )
    parser.add_argument(
        "--history-prior",
        type=float,
        default=0.0,
        help="the learners' history_prior (0: the plain rule's beliefs)",
    )
    parser.add_argument(
        "--history-filter",
        action="store_true",
        help="the learners' history_filter (a forward filter of the stream; "
        "needs --history-prior)",
    )
    parser.add_argument(
        "--history-arms",
        nargs="+",
        choices=ARMS,
        default=list(ARMS),
        help="the arms whose learners take --history-prior / --history-filter",
    )
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--name", default="fleet", help="file stem of the results")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    args.out.mkdir(parents=True, exist_ok=True)
    chunks = Parallel(n_jobs=args.jobs, return_as="generator_unordered")(
        delayed(run_repetition)(
            r,
            n_structures=args.structures,
            n_samples=args.samples,
            seed=args.seed,
            n_commissioning=args.commissioning,
            hindsight=args.fleet_record == "hindsight",
            shared_unlabelled=args.shared_unlabelled,
            unlabelled_weight=args.unlabelled_weight,
            policies=tuple(args.policies),
            shared_mean_precision=args.shared_mean_precision,
            tell_repairs=args.tell_repairs,
            learner_params=learner_params(args),
            learner_arms=tuple(args.history_arms),
        )
        for r in range(args.repeats)
    )
    rows = []
    # The tables are rewritten after every repetition: a long study stopped
    # early still leaves the repetitions it finished.
    for done, chunk in enumerate(chunks, start=1):
        rows += chunk
        write_results(args, pd.DataFrame(rows), done, time.perf_counter() - start)


def learner_params(args) -> dict:
    """The learner's parameters the command line sets for both arms."""
    params = {"history_prior": args.history_prior} if args.history_prior else {}
    if args.history_filter:
        params["history_filter"] = True
    return params


def write_results(args, runs: pd.DataFrame, done: int, seconds: float) -> None:
    """The per-structure table and the markdown summary of the runs so far."""
    runs = runs.sort_values(["repetition", "k", "policy", "arm"])
    runs.to_csv(args.out / f"{args.name}_runs.csv", index=False)
    command = (
        "OPENBLAS_NUM_THREADS=1 python benchmarks/bench_fleet.py "
        f"--repeats {args.repeats} --structures {args.structures} "
        f"--samples {args.samples} --seed {args.seed} --jobs {args.jobs} "
        f"--commissioning {args.commissioning} "
        f"--fleet-record {args.fleet_record} --name {args.name}"
        + (
            ""
            if tuple(args.policies) == POLICIES
            else " --policies " + " ".join(args.policies)
        )
        + (
            f" --unlabelled-weight {args.unlabelled_weight:g}"
            if args.shared_unlabelled
            else " --shared-labels-only"
        )
        + f" --shared-mean-precision {args.shared_mean_precision:g}"
        + (" --tell-repairs" if args.tell_repairs else "")
        + (f" --history-prior {args.history_prior:g}" if args.history_prior else "")
        + (" --history-filter" if args.history_filter else "")
        + (
            ""
            if tuple(args.history_arms) == ARMS or not learner_params(args)
            else " --history-arms " + " ".join(args.history_arms)
        )
    )
    header = [
        "# A fleet commissioned on healthy data: shared strength against alone "
        "(issue 29)",
        "",
        f"Generated by `{command}` ({seconds:.0f} s; {done} of {args.repeats} "
        f"repetitions done); per-structure rows in `{args.name}_runs.csv`.",
        "",
        f"Data: `make_fleet({args.structures}, n_samples={args.samples}, "
        "random_state=<repetition seed>)` (hard: many cold spells, damage at "
        "once; 70 % of structures damaged, 10 % with damage elsewhere, half of "
        "the damaged repaired), the same for both arms. Each structure "
        f"commissioned on its first {args.commissioning} healthy observations "
        "only; stream = its whole record; Z24 decision process. "
        + (
            "Both arms' learners are told of the record's repair "
            "(fit(..., actions=)): labels before it count in the class weights "
            "as the repair left their state. "
            if args.tell_repairs
            else "The learners are not told of the record's repair. "
        )
        + "Means over repetitions; ratios are shared / alone of the means; "
        + (
            "the shared arm's learner also passes the structure's unlabelled "
            f"steps (semi_supervised='em'), each weighted {args.unlabelled_weight:g}; "
            if args.shared_unlabelled
            else "the shared arm learns from labels only; "
        )
        + f"the shared arm's mean_precision_prior is {args.shared_mean_precision:g} "
        "(alone's 1); delay is the "
        "median number of steps from onset to the first damaged inspection "
        "(damaged structures that found it); 'shared found no later' counts a "
        "structure whose damage neither arm found as no later. `paced`: the "
        f"same budget for both arms, {FRACTION:.0%} of alone's plain-rule "
        "inspections of that structure.",
        "",
        "Goals (issue 29), from the 10th structure on: inspections ratio <= "
        "0.33, false repair ratio <= 0.1, regret ratio <= 1, damage inspected "
        "no later; unlike structures: regret ratio <= 1.05.",
        "",
        "",
    ]
    text = "\n".join(header) + summarise(runs, args.structures)
    (args.out / f"{args.name}.md").write_text(text)
    if done == args.repeats:
        print(text)


if __name__ == "__main__":
    main()
