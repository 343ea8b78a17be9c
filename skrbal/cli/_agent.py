"""``skrbal agent``: run a live agent from the shell, over its store.

Every command opens the store, does one thing and closes it, so the commands
can come from different processes, hours apart (a cron job observing, an
engineer recording a result, a dashboard reading the status):

- ``init``: commission a new agent, from a built-in case study or from a
  process file (JSON) and a commissioning campaign file;
- ``observe``: decide for new observations read as CSV (a file or standard
  input, live from a pipe), writing the decisions as CSV or JSON lines;
- ``inspect`` / ``cancel``: the result of a requested inspection, or give it up;
- ``record-action``: the maintenance action taken at a step;
- ``record-label``: a label the agent did not request (a routine inspection);
- ``process-template``: a decision process file to start from;
- ``status``: counts, spend, open requests, labelled set;
- ``verify``: check the event chain and the tables against it, reading only;
- ``export``: the history (or the requests, or the log) as CSV or Parquet.
- ``report``: one self-contained HTML page per store or agent: status,
  requests, spend against the budget, the timeline figure, the last warnings.
- ``serve``: keep the agent open and run the commands that ``skrbal --server
  SOCKET agent ...`` sends to a Unix socket (no import of scikit-learn each).

This module only builds the parser: a command's code (and pandas, the store)
is imported when the command runs.
"""

from __future__ import annotations

import argparse

from skrbal.cli._data import DATE_FORMAT_HELP, add_campaign_options
from skrbal.cli._errors import debug_option
from skrbal.cli._options import lazy_handler, store_option
from skrbal.cli._report import add_report_parser

__all__ = ["AGENT_METHODS", "CASE_FEATURES", "add_parser"]

CASE_FEATURES = {"synthetic": ["x1", "x2"], "z24": ["f1", "f2", "f3", "f4"]}
# Built-in methods an agent can run (random querying is a baseline, not a rule).
AGENT_METHODS = ("gmm-evpi", "gmm-em", "gmm-smoothing", "mrvm1-evpi", "mrvm2-evpi")

DURATIONS = (
    "A duration is a number of steps, or of seconds once the agent has times, "
    "and may carry a unit: s, min, h, d (86400 s), w (7 d), y (365.25 d, the "
    "Julian year), e.g. 30d, 2w, 1y."
)


_handler = lazy_handler


def add_parser(commands, name: str, help_text: str) -> None:
    """Add ``skrbal agent ...`` to the subcommands of the ``skrbal`` parser."""
    agent = commands.add_parser(
        name,
        help=help_text,
        description="Run risk-based active learning on a live monitoring feed. "
        "The agent lives in a store (a SQLite file or a PostgreSQL URL) that "
        "records every decision as it is made; each command opens it, acts "
        "and closes it, so commands may come from different processes.",
    )
    verbs = agent.add_subparsers(dest="verb", required=True, metavar="COMMAND")
    common = _common_options()
    commands_module = "skrbal.cli._agent_commands"
    init_module = "skrbal.cli._agent_init"
    export_module = "skrbal.cli._agent_export"
    _add_init(verbs, common, _handler(init_module, "init"))
    _add_observe(verbs, common, _handler("skrbal.cli._observe", "observe"))
    inspect = _writer(
        verbs,
        common,
        "inspect",
        _handler(commands_module, "inspect"),
        help="record the result of a requested inspection",
        description="Record the health state an inspection found (LABEL), or "
        "the report of an imperfect inspection method (--report); the model "
        "learns it and the optimal action is printed.",
    )
    inspect.add_argument("request_id", type=int, metavar="REQUEST_ID")
    inspect.add_argument(
        "label", nargs="?", metavar="LABEL", help="the state found (a perfect result)"
    )
    inspect.add_argument(
        "--report",
        metavar="OUTCOME",
        help="instead of LABEL: the report of the request's inspection method, "
        "one of its outcomes",
    )
    inspect.add_argument(
        "--timestamp",
        metavar="TIME",
        help="when the result came: seconds or an ISO 8601 date-time",
    )
    inspect.add_argument(
        "--key",
        metavar="KEY",
        help="a client key making the command idempotent: run again with the "
        "same key and arguments (say, after a lost connection), it prints the "
        "same output without recording anything again",
    )
    record_action = _writer(
        verbs,
        common,
        "record-action",
        _handler(commands_module, "record_action"),
        help="record the maintenance action actually taken at a step",
        description="Record the action taken at a step already observed (an "
        "index or a name of the process's actions); with --method "
        "gmm-smoothing it chooses the transitions the smoother assumes.",
    )
    record_action.add_argument("step", type=int, metavar="STEP")
    record_action.add_argument("action", metavar="ACTION")
    record_action.add_argument(
        "--key",
        metavar="KEY",
        help="a client key making the command idempotent (see inspect --key)",
    )
    _add_record_label(verbs, common, _handler(commands_module, "record_label"))
    serve = _writer(
        verbs,
        common,
        "serve",
        _handler("skrbal.cli._serve", "serve"),
        help="keep the agent open and run the commands sent to a socket",
        description="Open the agent once (its write lock held) and run, one "
        "at a time, the commands that 'skrbal --server SOCKET agent COMMAND "
        "...' sends to SOCKET (observe, inspect, cancel, record-action, "
        "record-label, status): the same options, output and exit status, "
        "without each paying for loading scikit-learn and the agent. Plain "
        "'skrbal agent COMMAND --store S' lines of a SQLite store find the "
        "server (a file S-server-AGENT names its socket) and are sent to it; "
        "for any store, SKRBAL_SERVER=SOCKET names it (SKRBAL_SERVER=none: "
        "every command runs alone). Ctrl-C or SIGTERM ends it.",
    )
    serve.add_argument(
        "--socket",
        required=True,
        metavar="PATH",
        help="the Unix socket to listen on (created; its permissions, from "
        "your umask, say who may send commands)",
    )
    cancel = _writer(
        verbs,
        common,
        "cancel",
        _handler(commands_module, "cancel"),
        help="give up an open request (its result will not be accepted; its "
        "cost stays charged to the budget, which counts a request when it is "
        "made)",
    )
    cancel.add_argument("request_id", type=int, metavar="REQUEST_ID")
    cancel.add_argument("--reason", help="kept in the store")
    cancel.add_argument(
        "--key",
        metavar="KEY",
        help="a client key making the command idempotent (see inspect --key)",
    )
    template = verbs.add_parser(
        "process-template",
        parents=[debug_option()],
        help="write a decision process file to start from",
        description="Write a decision process as JSON (the paper's synthetic "
        "process: four states, do nothing or repair) to edit into yours: "
        "transition[action][state] is the next state's distribution, "
        "state_utility and action_utility the utilities, inspection_cost the "
        "cost of an inspection, classes the labels of your campaign file, "
        "state_names and action_names the names shown.",
    )
    template.add_argument(
        "--out",
        default="-",
        metavar="FILE",
        help="the file to write (default, or -: stdout)",
    )
    template.set_defaults(handler=_handler(init_module, "process_template"))
    status = verbs.add_parser(
        "status",
        parents=[common],
        help="print counts, spend, open requests and the labelled set",
    )
    status.add_argument("--json", action="store_true", help="print one JSON object")
    status.set_defaults(handler=_handler("skrbal.cli._agent_status", "status"))
    verify = verbs.add_parser(
        "verify",
        parents=[common],
        help="check the agent's records for damage or edits, reading only",
        description="Walk the agent's event chain (each event's hash follows "
        "from the previous one and from the agent's configuration) and check "
        "the observations, requests and counters against it, without opening "
        "the agent for writing (a running observe may go on). Prints the "
        "number of events verified and the head of the chain (SEQ:HASH), to "
        "keep outside the store as the next --expected-head; a damaged store "
        "exits 2 with one line naming the table and the event or row.",
    )
    verify.add_argument(
        "--expected-head",
        metavar="SEQ:HASH",
        help="a head printed by an earlier verify: the store must still hold "
        "that event with that hash (catches a rollback to an older copy)",
    )
    verify.set_defaults(handler=_handler(export_module, "verify"))
    export = verbs.add_parser(
        "export",
        parents=[common],
        help="write the history to CSV or Parquet",
        description="Write one table of the agent to a file: the history (one "
        "row per step), the requests or the event log. A regular file is "
        "written atomically (old or complete, never half); '-' is standard "
        "output; a device or FIFO (/dev/stdout, a named pipe) is written in "
        "place.",
    )
    export.add_argument(
        "--out", required=True, metavar="FILE", help="the file, or - for stdout"
    )
    export.add_argument(
        "--table", choices=["history", "requests", "events"], default="history"
    )
    export.add_argument(
        "--raw",
        action="store_true",
        help="CSV for programs: write text cells as they are (by default a "
        "text cell starting with =, +, -, @, a tab or a carriage return gets "
        "a leading ' so that a spreadsheet does not run it as a formula)",
    )
    export.add_argument(
        "--format",
        choices=["csv", "parquet"],
        help="default: from the file's suffix (.parquet, else csv); Parquet "
        "needs pyarrow",
    )
    export.set_defaults(handler=_handler(export_module, "export"))
    add_report_parser(verbs)


def _add_record_label(verbs, common, handler) -> None:
    label = _writer(
        verbs,
        common,
        "record-label",
        handler,
        help="record a label the agent did not request (a routine inspection)",
        description="Record what an inspection the agent did not request "
        "found at an observed step (a scheduled or incidental one): the state "
        "(LABEL), or the report of one of the agent's inspection methods "
        "(--report with --method). The model learns it as it learns a "
        "requested result; its cost is shown as routine spend and is not "
        "charged to the budget. A step with an open request takes its result "
        "with 'skrbal agent inspect'.",
    )
    label.add_argument("step", type=int, metavar="STEP")
    label.add_argument(
        "label", nargs="?", metavar="LABEL", help="the state found (a perfect result)"
    )
    label.add_argument(
        "--report",
        metavar="OUTCOME",
        help="instead of LABEL: the report of inspection method --method",
    )
    label.add_argument(
        "--method",
        metavar="NAME",
        help="the agent's inspection method that made the inspection "
        "(default: the process's perfect inspection)",
    )
    label.add_argument(
        "--time",
        "--timestamp",
        dest="timestamp",
        metavar="TIME",
        help="when the inspection was made: seconds or an ISO 8601 date-time "
        "(not before the step's observation)",
    )
    label.add_argument(
        "--key",
        metavar="KEY",
        help="a client key making the command idempotent (see inspect --key)",
    )


def _common_options() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False, parents=[debug_option()])
    store_option(common)
    common.add_argument(
        "--agent",
        default="agent",
        metavar="NAME",
        help="the agent's name in the store (default: agent)",
    )
    return common


def _writer(verbs, common, name: str, handler, **texts):
    """A command that writes to the agent: --store, --agent and --wait."""
    parser = verbs.add_parser(name, parents=[common], **texts)
    _add_wait(parser)
    parser.set_defaults(handler=handler)
    return parser


def _add_wait(parser) -> None:
    parser.add_argument(
        "--wait",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="wait this long for another writer of the agent (say, a "
        "running observe) to finish (default: 0, fail at once)",
    )


def _add_init(verbs, common, handler) -> None:
    init = verbs.add_parser(
        "init",
        parents=[common],
        help="commission a new agent",
        description="Commission a new agent: from a built-in case study "
        "(--case: its decision process, a model of --method and the initial "
        "labelled set of the paper's protocol, drawn with --seed from the "
        "case's stream), or from your decision process (--process, JSON of "
        "DecisionProcess.to_json) and a commissioning campaign (--data), read "
        "as 'skrbal reproduce custom' reads it: feature columns, a label "
        "column, and optional time and action columns that are never "
        "features.",
    )
    source = init.add_mutually_exclusive_group(required=True)
    source.add_argument("--case", choices=sorted(CASE_FEATURES))
    source.add_argument("--process", metavar="JSON", help="a decision process file")
    init.add_argument(
        "--data",
        metavar="CSV",
        help="with --process: the commissioning inspections, a CSV or Parquet "
        "campaign file",
    )
    add_campaign_options(
        init,
        "commissioning file (--data)",
    ).description += (
        " With a time column the agent's clock (and budget periods) are in "
        "seconds, else in steps (always with --case). With an action column "
        "the actions taken are recorded for smoothing."
    )
    init.add_argument("--date-format", metavar="FORMAT", help=DATE_FORMAT_HELP)
    init.add_argument(
        "--labels",
        metavar="CSV",
        help="with --data: the inspection results in a file of their own, "
        "columns time (or row, counted from 0) and state, joined to the "
        "measurement of the same time (ISO 8601 spelt as you like); a time of "
        "no measurement is an error naming its line. The labelled rows up to "
        "the first unlabelled one commission the agent, the rest are observed",
    )
    init.add_argument(
        "--seed",
        type=int,
        default=0,
        help="with --case: seed of the initial labelled set (default: 0)",
    )
    init.add_argument(
        "--stream-out",
        metavar="CSV",
        help="with --case: also write the case's stream (the observations not "
        "used for commissioning, in order, with their true label) to feed "
        "observe and inspect; - for stdout",
    )
    init.add_argument(
        "--inspections",
        metavar="JSON",
        help="inspection methods to choose from by their value (EVSI) and "
        'cost: a JSON list of {"name": ..., "cost": ..., "confusion": '
        '[[P(report | state) per state], ...], "outcomes": [...]} '
        "(default: the process's perfect inspection)",
    )
    init.add_argument(
        "--method",
        choices=AGENT_METHODS,
        default="gmm-evpi",
        help="the model (and semi-supervised remedy) of a built-in method "
        "(default: gmm-evpi)",
    )
    init.add_argument(
        "--prior",
        choices=["data", "paper"],
        help="the Gaussian mixture's prior (gmm-* methods): 'data' centres and "
        "scales it on the commissioning features, so raw features (Hz, %%, "
        "mm) decide as well as standardised ones; 'paper' is the paper's "
        "(mean 0, unit scale), for standardised features (default: data with "
        "--data, paper with --case)",
    )
    init.add_argument(
        "--class-priors",
        metavar="JSON",
        help="where each state without a commissioning example lies relative "
        "to the healthy one (gmm-* methods): a JSON object, or a file of one, "
        'such as {"damaged": {"shift": -0.02, "units": "relative"}} for '
        "natural frequencies 2 %% below the healthy level (see the user guide, "
        "'Commissioning a new structure on healthy data'; default: no "
        "statement, the broad prior)",
    )
    init.add_argument(
        "--history-prior",
        type=float,
        default=0.0,
        metavar="S",
        help="the share, in [0, 1], of the decision process's prediction from "
        "the last inspected state (carried through the process's transitions) "
        "in the prior over each step's state; the rest is the model's class "
        "weights (gmm-* methods; see the user guide, 'Commissioning a new "
        "structure on healthy data', for what it costs; default: 0, the "
        "model's own weights)",
    )
    _add_budget(init)
    init.set_defaults(handler=handler)


def _add_budget(init) -> None:
    budget = init.add_argument_group(
        "budget",
        "Which inspections to request. The default is the paper's rule, EVPI > "
        "cost, without a limit. For a budget per period, --paced MONEY --period "
        "DURATION is the one to use (e.g. --paced 20 --period 30d); the options "
        "below combine (all must agree). " + DURATIONS,
    )
    budget.add_argument(
        "--paced",
        type=float,
        metavar="MONEY",
        help="recommended: spend at most this per --period, paced over the "
        "period with a reserve for its end, so that damage late in a period "
        "still finds money (PacedBudget)",
    )
    budget.add_argument(
        "--spend-cap",
        type=float,
        metavar="MONEY",
        help="at most this spend per --period, first come, first served: a "
        "period's money can go in its first hours, leaving the rest of it "
        "blind (SpendCap; prefer --paced)",
    )
    budget.add_argument(
        "--rate",
        type=float,
        help="instead of the cost rule, inspect this long-run share of the "
        "observations, those of highest EVPI (QuantileThreshold)",
    )
    budget.add_argument(
        "--period",
        metavar="DURATION",
        help="with --spend-cap or --paced: e.g. 30d, 1y",
    )
    budget.add_argument(
        "--origin",
        metavar="TIME",
        help="with --period: start of the first period, a step, seconds or an "
        "ISO 8601 date-time (default: the first commissioning time, or step 0)",
    )
    budget.add_argument(
        "--min-gap",
        metavar="DURATION",
        help="at least this time between two inspections (MinimumGap)",
    )
    budget.add_argument(
        "--max-open-requests",
        type=int,
        metavar="N",
        help="request nothing while N requests await their result",
    )
    budget.add_argument(
        "--request-timeout",
        metavar="DURATION",
        help="a request whose result has not come after this long expires and "
        "frees its slot (its result is still taken): e.g. 14d, or a number of "
        "observations without a time column; 'none' keeps requests open for "
        "ever (default: the budget's --period, else 30d with a time column, "
        "else none)",
    )


def _add_observe(verbs, common, handler) -> None:
    observe = verbs.add_parser(
        "observe",
        parents=[common],
        help="decide for new observations (CSV) and write the decisions",
        description="Read observations as CSV with a header (the agent's "
        "feature columns by name, other columns ignored) from a file or "
        "standard input, decide for each and write one decision per "
        "observation: step, timestamp, belief per state, EVPI, inspect, "
        "request_id and the recommended action. Rows are decided in batches "
        "of --batch-size, or as soon as a pipe has no more lines waiting, and "
        "each batch is committed to the store before its decisions are written.",
    )
    observe.add_argument(
        "input",
        nargs="?",
        default="-",
        metavar="INPUT",
        help="CSV file of observations, '-' for standard input (default)",
    )
    observe.add_argument(
        "--time-column",
        "--timestamp-column",
        dest="timestamp_column",
        metavar="COLUMN",
        help="a column of times (seconds or ISO 8601): needed, and only "
        "allowed, when the agent was commissioned with times (default: the "
        "agent's time column, the one its commissioning file's times came "
        "from, kept in the store; 'time' for agents stored before it was)",
    )
    observe.add_argument("--date-format", metavar="FORMAT", help=DATE_FORMAT_HELP)
    observe.add_argument(
        "--skip-missing",
        action="store_true",
        help="skip a row with a missing feature value (a sensor dropout: an "
        "empty cell, NA, NaN or null) instead of stopping the batch there: it "
        "is not observed and takes no step, a line on standard error names "
        "it (file line and column), and the store records it with the next "
        "batch (status: n_skipped)",
    )
    observe.add_argument(
        "--format",
        choices=["csv", "jsonl"],
        default="csv",
        help="decisions as CSV (default) or JSON lines",
    )
    observe.add_argument(
        "--out",
        metavar="FILE",
        help="write the decisions here, as they come (default, or -: stdout)",
    )
    observe.add_argument(
        "--batch-size",
        type=int,
        default=1000,
        metavar="N",
        help="observations decided and committed together (default: 1000)",
    )
    observe.add_argument(
        "--key",
        metavar="KEY",
        help="a client key making the command idempotent: batch i is committed "
        "under the key KEY#i, and batches are exactly --batch-size rows (a "
        "pipe's lines are not decided early), so the command run again on the "
        "same input prints the same decisions: the batches it had committed "
        "come from the store, the rest are decided",
    )
    _add_wait(observe)
    observe.set_defaults(handler=handler)
