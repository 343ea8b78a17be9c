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
