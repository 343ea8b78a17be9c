"""Commissioning a fleet's structures on what the fleet knows (``--shared``, ``add``).

Each structure is commissioned with a
:class:`~skrbal.mixture.PooledGMMClassifier` whose prior is learned from the
labelled data of the agents already in the store
(:class:`~skrbal.fleet.FleetKnowledge`), read again before each one: the
structures of ``skrbal fleet init --shared`` one after another in the file's
order, each on those before it; ``skrbal fleet add``'s on the whole fleet.
"""

from __future__ import annotations

import json

import pandas as pd

from skrbal.cli._agent_store import guarded, open_store
from skrbal.cli._fleet_commands import _read_fleet, _times_of

__all__ = ["add", "commission_assets"]

# As 'skrbal agent init': with times, a request expires after 30 days.
_DEFAULT_TIMEOUT = 30 * 86400.0


def commission_assets(
    fleet, fleet_data, process, estimator_of, *, shared: bool
) -> list[dict]:
    """Commission each asset of ``fleet_data`` in order, on ``estimator_of(asset)``.

    ``estimator_of`` is called just before its asset is commissioned, so a
    ``shared`` one reads the store with every asset before it in.
    """
    done = []
    for asset in fleet_data.assets:
        campaign = fleet_data.campaigns[asset]
        times = _times_of(campaign)
        X = pd.DataFrame(campaign.X, columns=campaign.feature_names)
        n_before = len(fleet.store_.agent_names())
        estimator = estimator_of(asset)
        fleet.commission(
            asset,
            X,
            campaign.y,
            timestamps=times,
            estimator=estimator,
            process=process,
            request_timeout=None if times is None else _DEFAULT_TIMEOUT,
            # A shared model learns from its structure's unlabelled stream too.
            semi_supervised="em" if shared else None,
        )
        done.append(
            {
                "asset": asset,
                "n_commissioning": len(campaign.y),
                # The structures whose labels its prior was learned from.
                "fleet_structures": n_before if shared else 0,
            }
        )
    return done


def shared_estimator(store, window: int, process):
    """``asset -> PooledGMMClassifier`` on the fleet prior of the store's agents."""
    from skrbal.fleet import FleetKnowledge

    knowledge = FleetKnowledge(store, window=window)
    classes = process.classes_.tolist()
    return lambda asset: knowledge.classifier(classes=classes)


def check_window(window: int) -> int:
    if window < 2:
        raise ValueError(f"--window must be an integer >= 2, got {window}")
    return window


def _fleet_process(args, store):
    from skrbal import DecisionProcess
    from skrbal.cli._data import read_process

    names = store.agent_names()
    if not names:
        raise ValueError(
            f"--store {args.store}: no agent yet; commission the fleet with "
            "'skrbal fleet init'"
        )
    stored = DecisionProcess.from_dict(store.configuration(names[0])["process"])
    if args.process is None:
        return stored
    process = read_process(args.process)
    if process.to_dict() != stored.to_dict():
        raise ValueError(
            f"--process {args.process}: differs from the fleet's process (that "
            f"of agent {names[0]!r}); a fleet's structures share one process"
        )
    return process


@guarded
def add(args) -> int:
    from skrbal.fleet import Fleet

    window = check_window(args.window)
    store = open_store(args)
    try:
        process = _fleet_process(args, store)
        fleet_data = _read_fleet(args, process)
        known = set(store.agent_names())
        there = [a for a in fleet_data.assets if a in known]
        if there:
            raise ValueError(
                f"--data {args.data}: asset {there[0]!r} has an agent in the "
                "store already; an agent is commissioned once"
            )
        with Fleet(store, name=args.budget_name) as fleet:
            done = commission_assets(
                fleet,
                fleet_data,
                process,
                shared_estimator(store, window, process),
                shared=True,
            )
        url = store.display_url
    finally:
        store.close()
    if args.json:
        print(json.dumps({"store": url, "budget": args.budget_name, "agents": done}))
    else:
        for d in done:
            print(
                f"{d['asset']}: commissioned on {d['n_commissioning']} rows, with "
                f"what {d['fleet_structures']} structures of fleet "
                f"{args.budget_name!r} know"
            )
    return 0
