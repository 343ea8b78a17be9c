"""The distributions carry the licence, the typing marker and one version."""

import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

import skrbal

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def dists(tmp_path_factory):
    pytest.importorskip("build")
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--wheel", "-o", str(out), "."],
        cwd=ROOT,
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
    for name in ("db", "postgres"):
        assert any(r.startswith("psycopg") for r in extras[name])


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
