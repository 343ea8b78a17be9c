import numpy as np
import pytest

from skrbal.cli import main


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    status = main(
        ["run", "--repeats", "3", "--n-jobs", "1", "--out", str(out), "--no-progress"]
    )
    return status, out


def test_run_prints_summary(cli_run, capsys):
    status, out = cli_run
    assert status == 0
    summary = (out / "summary.md").read_text()
    assert "| gmm-evpi | 3 |" in summary and "| gmm-random | 3 |" in summary
    assert (out / "totals.csv").read_text().count("\n") == 7  # header + 2 x 3


@pytest.mark.parametrize("name", ["learning_curves.png", "class_proportions.png"])
def test_run_writes_real_figures(cli_run, name):
    import matplotlib.image as mpimg

    _, out = cli_run
    path = out / name
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    image = mpimg.imread(path)
    assert image.shape[0] > 300 and image.shape[1] > 800
    rgb = image[..., :3]
    # Not a blank canvas: the two methods' lines use matplotlib's first two
    # colours (C0 blue, C1 orange), present in quantity.
    blue = np.all(np.abs(rgb - [0.122, 0.467, 0.706]) < 0.03, axis=-1).sum()
    orange = np.all(np.abs(rgb - [1.0, 0.498, 0.055]) < 0.03, axis=-1).sum()
    assert blue > 200 and orange > 200


def test_refuses_to_overwrite(cli_run, capsys):
    _, out = cli_run
    status = main(["run", "--repeats", "3", "--out", str(out), "--no-progress"])
    assert status == 2
    assert "resume" in capsys.readouterr().err


def test_help_explains_options(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = capsys.readouterr().out
    for option in ("--repeats", "--seed", "--out", "--methods", "--resume"):
        assert option in text
