"""``skrbal fleet``: the agents of one store on one budget, from the shell.

- ``init``: commission one agent per asset of a fleet campaign file (a
  campaign with an asset column) and create the fleet's budget; with
  ``--shared``, each on what the ones before it know;
- ``add``: commission new structures into a fleet, on what it knows now;
- ``observe``: decide for new observations of any assets (CSV with an asset
  column), each asset's rows one draw on the fleet budget;
- ``inspect``: the result of an inspection a structure's agent requested;
- ``status``: the budget's spend and price, one line per structure;
- ``report``: one self-contained HTML page, one row per structure: belief
  now, recommended action, open and overdue requests, spend.

This module only builds the parser; a command's code is imported when it runs.
"""

from __future__ import annotations

from skrbal.cli._agent import AGENT_METHODS, DURATIONS
from skrbal.cli._data import DATE_FORMAT_HELP, add_campaign_options
from skrbal.cli._errors import debug_option
from skrbal.cli._options import lazy_handler, store_option

__all__ = ["add_parser"]


def _handler(name: str, module: str = "skrbal.cli._fleet_commands"):
    return lazy_handler(module, name)


def _window_option(parser) -> None:
    parser.add_argument(
        "--window",
        type=int,
        default=50,
        metavar="N",
        help="each structure's first N healthy labels normalise its features "
        "(default: 50)",
    )


def _shared_options(init) -> None:
    init.add_argument(
        "--shared",
        action="store_true",
        help="shared strength: commission the assets one after another in the "
        "file's order, each with the pooled classifier on the prior learned from "
        "the labels of the ones before it",
    )
    _window_option(init)


def _common():
    common = debug_option()
    store_option(common)
    common.add_argument(
        "--budget-name",
        default="fleet",
        metavar="NAME",
        help="the fleet budget's name in the store (default: fleet)",
    )
    return common


def add_parser(commands, name: str, help_text: str) -> None:
    """Add ``skrbal fleet ...`` to the subcommands of the ``skrbal`` parser."""
    fleet = commands.add_parser(
        name,
        help=help_text,
        description="Run the agents of a fleet of structures in one store, on "
        "one budget: an inspection is granted where its value minus its cost "
        "is highest across the fleet, paced over the period, and a period's "
        "money is never overspent, whatever the processes drawing at once.",
    )
    verbs = fleet.add_subparsers(dest="verb", required=True, metavar="COMMAND")
    common = _common()
    init = verbs.add_parser(
        "init",
        parents=[common],
        help="commission one agent per asset and create the fleet budget",
        description="Commission one agent per asset of a fleet campaign (the "
        "campaign format of 'skrbal agent init --data', with an asset column "
        "naming each row's structure; every row labelled), all with the "
        "decision process --process and the model of --method, and create the "
        "fleet's budget (--limit per --period for all of them).",
    )
    init.add_argument("--process", required=True, metavar="JSON")
    init.add_argument("--data", required=True, metavar="CSV")
    init.add_argument(
        "--asset-column",
        default="asset",
        metavar="NAME",
        help="column naming each row's structure (default: asset)",
    )
    add_campaign_options(init, "fleet campaign file (--data)")
    init.add_argument("--date-format", metavar="FORMAT", help=DATE_FORMAT_HELP)
    init.add_argument(
        "--method",
        choices=AGENT_METHODS,
        help="every agent's model, each learning alone (default: gmm-evpi)",
    )
    _shared_options(init)
    init.add_argument(
        "--limit",
        required=True,
        type=float,
        metavar="MONEY",
        help="money per period for the whole fleet",
    )
    init.add_argument(
        "--period",
        required=True,
        metavar="DURATION",
        help="length of a budget period. " + DURATIONS,
    )
    init.add_argument(
        "--origin",
        metavar="TIME",
        help="start of the first period: a number or an ISO 8601 "
        "date-time (default: the first time of the file)",
    )
    init.add_argument(
        "--recent-values",
        type=int,
        default=2000,
        metavar="N",
        help="most competing values of the last period the fleet ranks a "
        "step against (default: 2000)",
    )
    init.add_argument(
        "--json", action="store_true", help="print the agents commissioned as JSON"
    )
    init.set_defaults(handler=_handler("init"))

    add = verbs.add_parser(
        "add",
        parents=[common],
        help="commission new structures on what the fleet knows now",
        description="Commission one agent per asset of a fleet campaign (as "
        "'skrbal fleet init' reads it) into an existing fleet, on its budget, "
        "each with shared strength: the pooled classifier on the prior learned "
        "from the labels of every agent in the store (commissioning labels, "
        "inspection results and routine labels), assets in file order, each "
        "on the ones before it too.",
    )
    add.add_argument("--data", required=True, metavar="CSV")
    add.add_argument(
        "--process",
        metavar="JSON",
        help="the decision process (default: the fleet's; if given, it must be it)",
    )
    add.add_argument(
        "--asset-column",
        default="asset",
        metavar="NAME",
        help="column naming each row's structure (default: asset)",
    )
    add_campaign_options(add, "fleet campaign file (--data)")
    add.add_argument("--date-format", metavar="FORMAT", help=DATE_FORMAT_HELP)
    _window_option(add)
    add.add_argument(
        "--json", action="store_true", help="print the agents commissioned as JSON"
    )
    add.set_defaults(handler=_handler("add", "skrbal.cli._fleet_shared"))

    observe = verbs.add_parser(
        "observe",
        parents=[common],
        help="decide for new observations of the fleet's assets",
        description="Read observations (CSV with the asset column, the "
        "agents' feature columns and, for agents with times, the time column), "
        "and decide for each asset's rows in order, one draw on the fleet "
        "budget per asset; write one decision per row.",
    )
    observe.add_argument(
        "--data", required=True, metavar="CSV", help="the observations; - for stdin"
    )
    observe.add_argument("--asset-column", default="asset", metavar="NAME")
    observe.add_argument(
        "--time-column",
        default="time",
        metavar="NAME",
        help="column of the times, for agents with times (default: time)",
    )
    observe.add_argument(
        "--out",
        default="-",
        metavar="FILE",
        help="where to write the decisions (default: -, stdout)",
    )
    observe.add_argument(
        "--json", action="store_true", help="write JSON lines instead of CSV"
    )
    observe.set_defaults(handler=_handler("observe"))

    inspect = verbs.add_parser(
        "inspect",
        parents=[common],
        help="record the result of an inspection a structure's agent requested",
        description="Record the health state an inspection of ASSET found for "
        "its request REQUEST_ID; its agent learns it and the optimal action is "
        "printed. (Agents on a fleet budget are resumed by the fleet, which "
        "knows their budget: 'skrbal agent inspect' cannot.)",
    )
    inspect.add_argument("asset", metavar="ASSET")
    inspect.add_argument("request_id", type=int, metavar="REQUEST_ID")
    inspect.add_argument("label", metavar="LABEL")
    inspect.set_defaults(handler=_handler("inspect"))

    status = verbs.add_parser(
        "status",
        parents=[common],
        help="the fleet budget's spend and one line per structure",
        description="Read the store (no lock): the fleet budget's spend by "
        "period and price, and per structure its belief now, recommended "
        "action, open and overdue requests, and spend.",
    )
    status.add_argument("--json", action="store_true", help="print JSON")
    status.set_defaults(handler=_handler("status"))

    report = verbs.add_parser(
        "report",
        parents=[common],
        help="write one self-contained HTML page about the fleet",
        description="Write one HTML page (no external file, no script): the "
        "fleet budget by period, and one row per structure: belief now, "
        "recommended action, open and overdue requests, spend.",
    )
    report.add_argument(
        "--out", required=True, metavar="FILE", help="the HTML file, or - for stdout"
    )
    report.set_defaults(handler=_handler("report"))
