"""The distributions carry the licence, the typing marker and one version."""

import json
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import numpy as np
import pytest

import skrbal

ROOT = Path(__file__).resolve().parents[1]


# What a build or a run leaves in a checkout; none of it goes into a dist.
NOT_SOURCES = shutil.ignore_patterns(
    ".git",
    ".venv*",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    "_build",
    "auto_examples",
    "generated",
    ".hypothesis",
    ".*_cache",
    ".benchmarks",
)


@pytest.fixture(scope="module")
def dists(tmp_path_factory):
    pytest.importorskip("build")
    out = tmp_path_factory.mktemp("dist")
    # Built from a copy: the build writes build/ and skrbal.egg-info/ next to
    # its sources, which other test workers and installs read at that time.
    source = tmp_path_factory.mktemp("source") / "skrbal"
    shutil.copytree(ROOT, source, ignore=NOT_SOURCES)
    subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--wheel", "-o", str(out), "."],
        cwd=source,
        check=True,
        capture_output=True,
    )
    (wheel,) = out.glob("*.whl")
    (sdist,) = out.glob("*.tar.gz")
    return wheel, sdist


def test_wheel_ships_licence_and_typing_marker(dists):
    wheel, _ = dists
    names = zipfile.ZipFile(wheel).namelist()
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert "skrbal/py.typed" in names
    assert "skrbal/__main__.py" in names
    metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
    text = zipfile.ZipFile(wheel).read(metadata).decode()
    assert f"Version: {skrbal.__version__}\n" in text
    assert "License-Expression: BSD-3-Clause" in text


def test_sdist_ships_licence(dists):
    _, sdist = dists
    with tarfile.open(sdist) as tar:
        names = tar.getnames()
    root = f"skrbal-{skrbal.__version__}"
    assert f"{root}/LICENSE" in names
    assert f"{root}/skrbal/py.typed" in names


def test_python_dash_m_runs_the_command():
    result = subprocess.run(
        [sys.executable, "-m", "skrbal", "--help"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "usage: skrbal" in result.stdout


def test_version_option_prints_the_package_version(capsys):
    from skrbal.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"skrbal {skrbal.__version__}"


def test_every_public_name_resolves_lazily():
    """``skrbal`` imports its names when first used (PEP 562)."""
    for name in skrbal.__all__:
        assert getattr(skrbal, name) is not None
        namespace = {}
        exec(f"from skrbal import {name}", namespace)
        assert namespace[name] is getattr(skrbal, name)
    assert set(skrbal.__all__) <= set(dir(skrbal))
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        skrbal.nothing  # noqa: B018


HEAVY = ("sklearn", "pandas", "scipy", "matplotlib", "sqlalchemy")


@pytest.mark.parametrize(
    "code",
    [
        "import skrbal",
        "from skrbal.cli import main\ntry:\n    main(['--version'])\n"
        "except SystemExit:\n    pass",
        "from skrbal.cli import main\ntry:\n    main(['--help'])\n"
        "except SystemExit:\n    pass",
    ],
)
def test_start_up_imports_no_heavy_module(code):
    """#18.12: 'skrbal --version' took 1.8 s importing scikit-learn and pandas."""
    top = "{m.split('.')[0] for m in sys.modules}"
    probe = f"{code}\nimport sys\nprint(sorted({top}))"
    result = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    loaded = result.stdout.strip().splitlines()[-1]
    assert not [m for m in HEAVY if f"'{m}'" in loaded], loaded


def test_online_names_resolve_lazily():
    """``skrbal.online`` imports its names when first used, as ``skrbal`` does."""
    import skrbal.online as online
    from skrbal.exceptions import StoreError
    from skrbal.online._agent import RiskBasedAgent
    from skrbal.online._records import AgentRecord
    from skrbal.online._sql._store import AgentStore

    assert online.AgentStore is AgentStore and online.StoreError is StoreError
    assert online.RiskBasedAgent is RiskBasedAgent
    assert online.AgentRecord is AgentRecord
    for name in online.__all__:
        namespace = {}
        exec(f"from skrbal.online import {name}", namespace)
        assert namespace[name] is getattr(online, name)
    assert set(online.__all__) <= set(dir(online))
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        online.nothing  # noqa: B018


def test_agent_status_reads_the_store_without_sklearn_or_pandas(tmp_path):
    """#18.12: 'skrbal agent status' took 2.2 s, mostly importing scikit-learn
    (the agent's module, the decision process) and pandas (the frames); #28.25:
    then 0.32 s, a fifth of it numpy, for counts and the open requests' times;
    #28.25 again: then 0.317 s on a quiet machine, most of it SQLAlchemy, which
    a SQLite file does not need (its queries run through sqlite3)."""
    store = tmp_path / "agents.db"
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    init = ["-m", "skrbal", "agent", "init", "--store", str(store)]
    subprocess.run([sys.executable, *init, "--case", "synthetic", "--stream-out",
                    str(tmp_path / "s.csv")], check=True, env=env)  # fmt: skip
    # Open requests: their times are read too (28.25: without numpy).
    from skrbal.online import AgentStore, RiskBasedAgent

    stream = np.loadtxt(tmp_path / "s.csv", delimiter=",", skiprows=1)[:60, :2]
    with RiskBasedAgent.from_store(str(store)) as agent:
        agent.observe(stream)
        assert agent.status()["n_open"] > 0
    # The command's entry point in a fresh interpreter, then what it imported.
    probe = (
        "import sys\nfrom skrbal.cli import main\n"
        f"code = main(['agent', 'status', '--store', {str(store)!r}])\n"
        "print(code, sorted({m.split('.')[0] for m in sys.modules}))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
        env=env,
    )
    assert "n_commissioning: 12" in result.stdout
    assert "open request 1: step" in result.stdout
    code, loaded = result.stdout.strip().splitlines()[-1].split(" ", 1)
    assert code == "0"
    # 28.25: numpy was a fifth of the command's start, for a few numbers,
    # and SQLAlchemy most of the rest.
    heavy = ("sklearn", "pandas", "scipy", "numpy", "sqlalchemy")
    heavy = [m for m in heavy if f"'{m}'" in loaded]
    assert not heavy, f"skrbal agent status imported {heavy}"
    # What sqlite3 read is what the store reads through SQLAlchemy.
    shown = subprocess.run(
        [sys.executable, "-m", "skrbal", "agent", "status", "--store", str(store),
         "--json"],
        capture_output=True, text=True, check=True, cwd=tmp_path, env=env,
    )  # fmt: skip
    with AgentStore(str(store)) as opened:
        assert json.loads(shown.stdout) == json.loads(
            json.dumps(opened.status("agent"))
        )


def _project() -> dict:
    import tomllib

    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_the_agent_on_sqlite_needs_no_extra():
    """#18.11: a plain install could not run the agent even on SQLite."""
    project = _project()
    core = [r.lower() for r in project["dependencies"]]
    assert any(r.startswith("sqlalchemy") for r in core)
    assert not any(r.startswith("psycopg") for r in core)
    extras = project["optional-dependencies"]
    assert any(r.startswith("psycopg") for r in extras["postgres"])
    # One extra for the PostgreSQL driver (a second name, db, was the same).
    assert "db" not in extras


def test_install_docs_list_every_extra_and_the_python_version():
    project = _project()
    index = (ROOT / "docs" / "index.rst").read_text()
    readme = (ROOT / "README.md").read_text()
    for extra in project["optional-dependencies"]:
        assert f'.[{extra}]"' in index or f"[{extra}]" in index, extra
        assert f"`{extra}`" in readme, extra
    version = project["requires-python"].removeprefix(">=")
    assert f"Python {version} or newer" in index
    assert f"Python {version} or newer" in readme
    assert "Python 3.10" not in index


_DECISION_STEP = """
import json, sys
import numpy as np
from skrbal._decision._serialisation import process_from_dict
from skrbal._decision._tables import ProcessTables
from skrbal._learning._kernel import DecisionKernel
from skrbal.budget._paced_rule import PacedRule
from skrbal.budget._rules import CostThresholdRule, MinimumGapRule
from skrbal.budget._scan import AllOfRule

given = json.loads(sys.stdin.read())
process = process_from_dict(ProcessTables, given["process"])
rules = {
    "paced": PacedRule(**given["paced"]),
    "threshold_gap": AllOfRule(
        policies=[CostThresholdRule(), MinimumGapRule(gap=given["gap"])]
    ),
}
proba, times = np.array(given["proba"]), np.array(given["times"])
out = {}
for name, rule in rules.items():
    kernel = DecisionKernel(process, None, rule, max_open_requests=3)
    decided = kernel.decide(proba, times, rule.initial_state(), n_open=1)
    out[name] = [decided.evpi.tobytes().hex(), decided.action.tolist(),
                 decided.requested.tolist(), decided.budget_state, decided.n_blocked]
heavy = ("sklearn", "pandas", "scipy", "sqlalchemy")
out["imported"] = [m for m in heavy if m in sys.modules]
print(json.dumps(out))
"""


def test_the_decision_step_decides_without_sklearn_alike(tmp_path):
    """#28.25: the decision step (EVPI, the budget's scan, the cap on open
    requests) imported scikit-learn, pandas and scipy.stats through the
    process and the budget policies (estimators), so a command that decides
    could not start in under 2 s. Its rules now import numpy alone, and the
    estimators are those rules with scikit-learn's API on top: a kernel built
    from the stored parameters decides bit for bit as the estimators'."""
    from skrbal import synthetic_decision_process
    from skrbal._learning import DecisionKernel
    from skrbal.budget import AllOf, CostThreshold, MinimumGap, PacedBudget

    process = synthetic_decision_process()
    rng = np.random.default_rng(0)
    proba = rng.dirichlet(np.full(4, 0.3), size=400)
    times = np.cumsum(rng.exponential(1.0, size=400))
    paced = PacedBudget(limit=40.0, period=50.0, explore=0.1)
    policies = {
        "paced": paced,
        "threshold_gap": AllOf(policies=[CostThreshold(), MinimumGap(gap=3.0)]),
    }
    expected = {}
    for name, policy in policies.items():
        kernel = DecisionKernel(process, None, policy, max_open_requests=3)
        decided = kernel.decide(proba, times, policy.initial_state(), n_open=1)
        expected[name] = [decided.evpi.tobytes().hex(), decided.action.tolist(),
                          decided.requested.tolist(), decided.budget_state,
                          decided.n_blocked]  # fmt: skip
        assert decided.requested.size > 1
    given = {
        "process": process.to_dict(),
        "paced": paced.get_params(),
        "gap": 3.0,
        "proba": proba.tolist(),
        "times": times.tolist(),
    }
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    result = subprocess.run(
        [sys.executable, "-c", _DECISION_STEP],
        input=json.dumps(given),
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
        env=env,
    )
    got = json.loads(result.stdout)
    assert got.pop("imported") == []
    assert got == json.loads(json.dumps(expected))
