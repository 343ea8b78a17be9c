import errno
import os
import re
import sys

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


# ---------------------------------------------------------------------- #
# skrbal reproduce
# ---------------------------------------------------------------------- #
REPRODUCE_METHODS = ["gmm-evpi", "gmm-random", "gmm-em"]


def colour_pixels(image, rgb, tol=0.03) -> int:
    return int(np.all(np.abs(image[..., :3] - rgb) < tol, axis=-1).sum())


C0, C1, C2 = [0.122, 0.467, 0.706], [1.0, 0.498, 0.055], [0.173, 0.627, 0.173]


@pytest.fixture(scope="module")
def reproduced(tmp_path_factory):
    out = tmp_path_factory.mktemp("reproduce")
    argv = ["reproduce", "synthetic", "--repeats", "2", "--n-jobs", "1"]
    argv += ["--methods", *REPRODUCE_METHODS, "--out", str(out), "--no-progress"]
    return main(argv), out


def test_reproduce_writes_results_and_summary(reproduced):
    import pandas as pd

    status, out = reproduced
    assert status == 0
    totals = pd.read_csv(out / "totals.csv")
    assert sorted(totals["method"].unique()) == sorted(REPRODUCE_METHODS)
    assert len(totals) == 2 * len(REPRODUCE_METHODS)
    assert (out / "config.json").exists()
    assert len(list((out / "repetitions").glob("rep-*.json"))) == 2

    summary = (out / "summary.md").read_text()
    assert summary.startswith("# synthetic: 2 repetitions")
    assert "| method | 0 | 5 | 10 | 20 | 50 | final |" in summary
    # The inspections table states each method's mean and spread.
    for method in REPRODUCE_METHODS:
        counts = totals.loc[totals["method"] == method, "n_inspections"]
        row = next(
            line
            for line in summary.splitlines()
            if line.startswith(f"| {method} | 2 |")
        )
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        assert float(cells[2]) == pytest.approx(counts.mean(), abs=1e-3)
        assert float(cells[3]) == pytest.approx(counts.std(ddof=0), abs=1e-3)
    # Final decision accuracy: the median over runs, as in totals.csv.
    final = totals.groupby("method")["final_decision_accuracy"].median()
    accuracy = summary.split("## Decision accuracy")[1].split("## Macro F1")[0]
    row = next(line for line in accuracy.splitlines() if line.startswith("| gmm-em"))
    assert row.rstrip(" |").split("|")[-1].strip().startswith(f"{final['gmm-em']:.3f}")
    for name in (
        "learning_curves.png",
        "class_proportions.png",
        "effective_proportions.png",
        "query_counts.png",
        "query_positions.png",
        "evpi_surfaces.png",
    ):
        assert f"[{name}]({name})" in summary


def _image(path):
    import matplotlib.image as mpimg

    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return mpimg.imread(path)


def test_reproduce_learning_curves_show_every_method(reproduced):
    image = _image(reproduced[1] / "learning_curves.png")
    assert image.shape[1] > 1000
    for colour in (C0, C1, C2):  # three methods, three line colours
        assert colour_pixels(image, colour) > 150


def test_reproduce_query_figures(reproduced):
    out = reproduced[1]
    counts = _image(out / "query_counts.png")
    # Two EVPI methods (the random one repeats gmm-evpi's counts): two colours.
    assert colour_pixels(counts, C0) > 300 and colour_pixels(counts, C1) > 300
    positions = _image(out / "query_positions.png")
    # One panel per method, bars in C0 at alpha 0.8 over white.
    bar = 0.8 * np.array(C0) + 0.2
    assert colour_pixels(positions, bar) > 100
    assert positions.shape[0] > 3 * 250  # three stacked panels


def test_reproduce_evpi_surfaces(reproduced):
    from matplotlib import colormaps

    image = _image(reproduced[1] / "evpi_surfaces.png")
    # Two EVPI methods x (before, after): two rows of two panels.
    assert image.shape[0] > 800 and image.shape[1] > 1200
    viridis = colormaps["viridis"]
    low, high = viridis(0.0)[:3], viridis(1.0)[:3]
    assert colour_pixels(image, low, 0.05) > 10_000  # low EVPI far from the data
    assert colour_pixels(image, high, 0.08) > 50  # the inspection region
    assert colour_pixels(image, [1.0, 1.0, 1.0], 0.02) > 1000  # means, cost contour


def test_reproduce_z24_from_a_file(tmp_path, capsys):
    import json

    from skrbal.datasets import make_z24_like

    X, _, _ = make_z24_like(random_state=7)
    data = tmp_path / "z24.csv"
    np.savetxt(data, X, delimiter=",")
    out = tmp_path / "out"
    argv = ["reproduce", "z24", "--data", str(data), "--repeats", "2"]
    argv += ["--methods", "gmm-evpi", "gmm-random", "--n-jobs", "1"]
    assert main([*argv, "--out", str(out), "--no-progress"]) == 0
    config = json.loads((out / "config.json").read_text())
    assert config["data_source"].startswith(f"load_z24({str(data)!r}), sha256 ")
    assert config["initial_size"] == 0.003 and config["standardise"] is True
    summary = (out / "summary.md").read_text()
    assert "No EVPI surfaces: the record has 4 features" in summary
    assert not (out / "evpi_surfaces.png").exists()
    assert (out / "query_positions.png").exists()
    # Resuming refuses other data.
    np.savetxt(data, X[::-1], delimiter=",")
    assert main([*argv, "--out", str(out), "--no-progress", "--resume"]) == 2
    assert "data_source" in capsys.readouterr().err


def test_reproduce_z24_reads_a_struct_style_mat(tmp_path, capsys):
    import json

    import scipy.io

    from skrbal.datasets import make_z24_like

    X, _, _ = make_z24_like(random_state=7)
    data = tmp_path / "z24.mat"
    # As circulated copies hold it: a struct with the frequencies and a note.
    info = "Z24 bridge, first four natural frequencies (Hz)"
    scipy.io.savemat(data, {"databasez24": {"data": X, "info": info}})
    out = tmp_path / "out"
    argv = ["reproduce", "z24", "--data", str(data), "--repeats", "2"]
    argv += ["--damage-onset", "3462", "--methods", "gmm-evpi", "gmm-random"]
    argv += ["--n-jobs", "1", "--no-progress", "--no-figures", "--out", str(out)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    protocol = (
        "Labelling: frequencies from databasez24.data; damage from observation "
        "3462 (counted from 0) of 3932; classes 3 and 4 are the first 235 and "
        "the last 235 damaged observations; class 2 (cold) the pre-damage "
        "observations with first natural frequency above 4.1 Hz"
    )
    assert protocol in (out / "summary.md").read_text() and protocol in printed
    config = json.loads((out / "config.json").read_text())
    assert config["labelling"].startswith("frequencies from databasez24.data")
    # Another protocol is another study: resuming with it is refused.
    argv[argv.index("3462")] = "3476"
    assert main([*argv, "--resume"]) == 2
    assert "labelling" in capsys.readouterr().err


@pytest.fixture
def campaign_files(tmp_path):
    import json

    import pandas as pd

    from skrbal import synthetic_decision_process
    from skrbal.datasets import make_degradation_stream

    X, y, actions = make_degradation_stream(2, 300, random_state=3)
    data = tmp_path / "rig.csv"
    pd.DataFrame(
        {
            "time": np.arange(len(y)),
            "strain": X[:, 0],
            "frequency": X[:, 1],
            "state": y,
            "action": actions,
        }
    ).to_csv(data, index=False)
    process = tmp_path / "process.json"
    description = {
        "format_version": 1,
        "transition": np.asarray(synthetic_decision_process().transition).tolist(),
        "state_utility": [10.0, 10.0, 5.0, -75.0],
        "action_utility": [0.0, -20.0],
        "inspection_cost": 5.0,
        "classes": [1, 2, 3, 4],
    }
    process.write_text(json.dumps(description))
    return data, process


def test_reproduce_custom_campaign_and_process(campaign_files, tmp_path, capsys):
    import json

    data, process = campaign_files
    out = tmp_path / "out"
    argv = ["reproduce", "custom", "--data", str(data), "--process", str(process)]
    argv += ["--label-column", "state", "--repeats", "2", "--methods", "gmm-evpi"]
    argv += ["gmm-random", "--n-jobs", "1", "--no-progress", "--out", str(out)]
    assert main(argv) == 0
    summary = (out / "summary.md").read_text()
    assert summary.startswith("# custom: 2 repetitions")
    assert (
        "Labelling: features ['strain', 'frequency'], labels from column 'state', "
        "actions from column 'action', time from column 'time'."
    ) in summary
    config = json.loads((out / "config.json").read_text())
    assert f"; process {process} sha256 " in config["data_source"]
    assert config["case"] == "custom" and config["standardise"] is True
    assert (out / "evpi_surfaces.png").exists()  # two features: surfaces drawn
    capsys.readouterr()
    # The rig recording through the synthetic case: its process, 0.2 %.
    rig = tmp_path / "rig"
    argv = ["reproduce", "synthetic", "--data", str(data), "--label-column", "state"]
    argv += ["--repeats", "1", "--methods", "gmm-evpi", "--n-jobs", "1"]
    assert main([*argv, "--no-progress", "--no-figures", "--out", str(rig)]) == 0
    config = json.loads((rig / "config.json").read_text())
    assert config["case"] == "synthetic" and config["initial_size"] == 0.002


def test_reproduce_declares_the_mrvm_width_on_the_case(
    campaign_files, tmp_path, capsys
):
    import json

    # A rig recording through the synthetic case has the default width 1/D,
    # not the generated stream's 0.05; --mrvm-gamma declares another, which
    # is recorded, printed and part of the study.
    data, _ = campaign_files
    out = tmp_path / "out"
    argv = ["reproduce", "synthetic", "--data", str(data), "--label-column", "state"]
    argv += ["--repeats", "1", "--methods", "mrvm2-evpi", "--initial-size", "20"]
    argv += ["--n-jobs", "1", "--no-progress", "--no-figures", "--out", str(out)]
    assert main([*argv, "--mrvm-gamma", "0.3"]) == 0
    config = json.loads((out / "config.json").read_text())["methods"]["mrvm2-evpi"]
    assert config["case_params"] == {"gamma": "0.3"}
    assert config["estimator"] == "MulticlassRVC(gamma=0.3, random_state=0)"
    summary = (out / "summary.md").read_text()
    assert (
        "- `mrvm2-evpi`: `MulticlassRVC(gamma=0.3, random_state=0)` (set by the "
        "case study: gamma=0.3); inspect when EVPI exceeds the inspection cost"
    ) in summary
    capsys.readouterr()
    # Resuming with the default width is another study: refused.
    assert main([*argv, "--resume"]) == 2
    assert "differs in ['methods']" in one_line_error(capsys)
    assert main([*argv, "--resume", "--mrvm-gamma", "1/D"]) == 2
    assert "differs in ['methods']" in one_line_error(capsys)


def test_mrvm_gamma_options(campaign_files, tmp_path, capsys):
    from skrbal.cli import _parser
    from skrbal.cli._data import case_from_args

    def case(*extra):
        args = _parser().parse_args(["reproduce", *extra])
        return case_from_args(args)

    assert case("synthetic").method_params["mrvm1-evpi"] == {"gamma": 0.05}
    z24_own = {"linear_term": 0.1}  # declared by the Z24 cases
    assert case("z24").method_params == {
        "mrvm1-evpi": z24_own,
        "mrvm2-evpi": z24_own,
    }
    rig = ["--data", str(campaign_files[0]), "--label-column", "state"]
    assert case("synthetic", *rig).method_params == {}  # a recording: 1/D
    # 1/D takes the synthetic case back to the paper's width.
    assert case("synthetic", "--mrvm-gamma", "1/D").method_params == {}
    only_two = case("synthetic", "--mrvm-gamma", "0.2", "--methods", "mrvm2-evpi")
    assert only_two.method_params == {
        "mrvm1-evpi": {"gamma": 0.05},
        "mrvm2-evpi": {"gamma": 0.2},
    }
    # The width joins what the case declares; it replaces only the width.
    assert case("z24", "--mrvm-gamma", "0.2").method_params == {
        "mrvm1-evpi": {**z24_own, "gamma": 0.2},
        "mrvm2-evpi": {**z24_own, "gamma": 0.2},
    }
    out = str(tmp_path / "out")
    argv = ["reproduce", "synthetic", "--mrvm-gamma", "0.1", "--out", out]
    assert main([*argv, "--methods", "gmm-evpi", "--no-figures"]) == 2
    assert "--methods runs neither" in one_line_error(capsys)
    for bad in ("0", "-1", "inf", "wide"):
        with pytest.raises(SystemExit):
            main(["reproduce", "synthetic", "--mrvm-gamma", bad, "--out", out])
        assert "expected 1/D or a positive number" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "extra, message",
    [
        (["synthetic", "--damage-onset", "3462"], "--damage-onset: options of the z24"),
        (["z24", "--label-column", "y"], "--label-column: options of a campaign"),
        (["z24", "--process", "p.json"], "--process is for 'reproduce custom'"),
        (["custom"], "reproduce custom needs --data"),
        (["synthetic", "--initial-size", "5"], "pass it with --data"),
        (
            ["z24", "--cold-rule", "temperature", "--cold-threshold", "4.2"],
            "cannot go with --cold-rule temperature",
        ),
    ],
)
def test_reproduce_misplaced_data_options(extra, message, tmp_path, capsys):
    argv = ["reproduce", *extra, "--out", str(tmp_path / "out"), "--no-figures"]
    assert main(argv) == 2
    assert message in one_line_error(capsys)
    assert not (tmp_path / "out").exists()


def test_reproduce_custom_names_the_bad_file(campaign_files, tmp_path, capsys):
    data, process = campaign_files
    argv = ["reproduce", "custom", "--data", str(data), "--process", str(process)]
    assert main([*argv, "--no-figures"]) == 2  # no 'label' column: it is 'state'
    assert f"{data} has no label column 'label'" in one_line_error(capsys)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    argv[argv.index(str(process))] = str(bad)
    assert main([*argv, "--label-column", "state", "--no-figures"]) == 2
    assert "bad.json" in one_line_error(capsys)


def test_reproduce_options_reach_the_study(monkeypatch):
    import skrbal.experiments
    from skrbal.experiments import available_methods

    seen = {}

    class Stop(Exception):
        pass

    def fake_run_study(case, methods, n_repeats, **kwargs):
        seen.update(case=case, methods=methods, n_repeats=n_repeats, **kwargs)
        raise Stop

    monkeypatch.setattr(skrbal.experiments, "run_study", fake_run_study)
    with pytest.raises(Stop):
        main(["reproduce", "synthetic", "--scheduler", "local", "--n-jobs", "2"])
    assert seen["methods"] == available_methods()  # every built-in by default
    assert seen["n_repeats"] == 1000 and seen["scheduler"] == "local"
    assert seen["n_jobs"] == 2 and seen["case"].name == "synthetic"
    assert str(seen["out"]) == "skrbal-reproduce-synthetic"


def test_reproduce_rejects_bad_options(tmp_path, capsys):
    # synthetic --data reads a rig recording (issue 13): a missing one fails.
    assert main(["reproduce", "synthetic", "--data", str(tmp_path / "x.csv")]) == 2
    assert "campaign file not found" in capsys.readouterr().err
    assert main(["reproduce", "z24", "--data", str(tmp_path / "missing.csv")]) == 2
    assert "not found" in capsys.readouterr().err
    assert main(["reproduce", "synthetic", "--repeats", "0"]) == 2
    assert (
        main(["reproduce", "synthetic", "--example-repetition", "5", "--repeats", "3"])
        == 2
    )
    # Only built-in methods by name: other estimators need the Python API.
    with pytest.raises(SystemExit):
        main(["reproduce", "synthetic", "--methods", "my-classifier"])
    assert "invalid choice" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["reproduce", "--help"])
    text = capsys.readouterr().out
    assert "Python API" in text and "run_study" in text
    for option in ("--data", "--repeats", "--methods", "--n-jobs", "--scheduler"):
        assert option in text


# ---------------------------------------------------------------------- #
# clean failures
# ---------------------------------------------------------------------- #
QUICK = ["--repeats", "1", "--n-jobs", "1", "--no-progress"]


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("skrbal: "), err
    return lines[0]


def test_output_under_a_file_is_one_line(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    status = main(["run", *QUICK, "--out", str(blocker / "results")])
    assert status == 1
    assert "a-file" in one_line_error(capsys)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_read_only_folder_is_one_line(tmp_path, capsys):
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        status = main(["run", *QUICK, "--out", str(folder / "results")])
    finally:
        folder.chmod(0o755)
    assert status == 1
    assert "Permission denied" in one_line_error(capsys)


@pytest.mark.parametrize(
    "call, error",
    [
        ("fsync", OSError(errno.ENOSPC, "No space left on device")),
        ("replace", OSError(errno.EROFS, "Read-only file system")),
    ],
)
def test_disk_errors_are_one_line(tmp_path, capsys, monkeypatch, call, error):
    """A full or read-only disk, as the operating system reports them."""

    def fail(*args, **kwargs):
        raise error

    monkeypatch.setattr(os, call, fail)
    status = main(["run", *QUICK, "--out", str(tmp_path / "results")])
    monkeypatch.undo()
    assert status == 1
    assert error.strerror in one_line_error(capsys)


def test_unreachable_scheduler_is_one_line(tmp_path, capsys):
    dask = pytest.importorskip("dask")
    pytest.importorskip("dask.distributed")
    out = tmp_path / "results"
    argv = ["reproduce", "synthetic", *QUICK, "--methods", "gmm-evpi"]
    argv += ["--scheduler", "tcp://127.0.0.1:1", "--out", str(out)]
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        status = main(argv)
    assert status == 1
    assert "tcp://127.0.0.1:1" in one_line_error(capsys)
    # Nothing was started: the same command can be run again as it is.
    assert not (out / "config.json").exists()


@pytest.fixture
def no_matplotlib(monkeypatch):
    """matplotlib made unimportable, as on an install without the plot extra."""
    for name in [m for m in sys.modules if m.split(".")[0] == "matplotlib"]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)


@pytest.mark.parametrize("command", [["run"], ["reproduce", "synthetic"]])
def test_missing_matplotlib_is_found_before_the_study(
    tmp_path, capsys, no_matplotlib, command
):
    out = tmp_path / "results"
    argv = [*command, *QUICK, "--methods", "gmm-evpi", "--out", str(out)]
    assert main(argv) == 1
    message = one_line_error(capsys)
    assert "matplotlib" in message and "--no-figures" in message
    assert not (out / "config.json").exists()  # no study was run
    # Without figures the study runs and writes its summary.
    assert main([*argv, "--no-figures"]) == 0
    assert "| gmm-evpi |" in (out / "summary.md").read_text()
    assert not list(out.glob("*.png"))


@pytest.mark.parametrize("command", [["run"], ["reproduce", "synthetic"]])
def test_summary_is_written_before_any_figure(tmp_path, monkeypatch, command):
    import skrbal.plotting

    class FigureFailed(Exception):
        pass

    def fail(*args, **kwargs):
        raise FigureFailed

    monkeypatch.setattr(skrbal.plotting.QueryCurveDisplay, "from_study", fail)
    out = tmp_path / "results"
    with pytest.raises(FigureFailed):
        main([*command, *QUICK, "--methods", "gmm-evpi", "--out", str(out)])
    assert "| gmm-evpi |" in (out / "summary.md").read_text()
    assert (out / "totals.csv").exists()


@pytest.mark.parametrize("command", [["run"], ["reproduce", "synthetic"]])
def test_negative_seed_names_the_option(tmp_path, capsys, command):
    out = tmp_path / "results"
    assert main([*command, *QUICK, "--seed", "-1", "--out", str(out)]) == 2
    assert "--seed must be >= 0, got -1" in one_line_error(capsys)
    assert not out.exists()


def test_overwrite_replaces_the_study(tmp_path, capsys):
    out = tmp_path / "results"
    argv = ["run", *QUICK, "--methods", "gmm-evpi", "gmm-random", "--out", str(out)]
    assert main([*argv, "--seed", "3"]) == 0
    first = (out / "totals.csv").read_text()
    assert main(argv) == 2  # a study is there: refused without an option
    assert "--overwrite" in one_line_error(capsys)
    assert main([*argv, "--overwrite"]) == 0
    assert (out / "totals.csv").read_text() != first  # seed 0 now, not 3
    assert '"seed": 0' in (out / "config.json").read_text()
    assert main([*argv, "--overwrite"]) == 0  # twice in a row, as make demo
    with pytest.raises(SystemExit):
        main([*argv, "--overwrite", "--resume"])
    assert "not allowed with" in capsys.readouterr().err


def test_overwrite_removes_stale_figures(tmp_path):
    """A figure the new study does not draw must not outlive the old study."""
    out = tmp_path / "results"
    argv = ["run", *QUICK, "--methods", "gmm-evpi", "--out", str(out)]
    assert main(argv) == 0
    stale = out / "effective_proportions.png"  # as a gmm-em study leaves it
    stale.write_bytes(b"\x89PNG of another study")
    (out / "notes.txt").write_text("the user's own file")
    assert main([*argv, "--overwrite"]) == 0
    assert not stale.exists()
    assert (out / "learning_curves.png").exists()
    assert (out / "notes.txt").exists()  # only the study's own files go


def test_busy_folder_is_one_line(tmp_path, capsys):
    """Another run holds the folder: refused at once, in one line."""
    import threading

    from skrbal.experiments._folder import folder_lock

    out = tmp_path / "results"
    held, release = threading.Event(), threading.Event()

    def hold():
        with folder_lock(out):
            held.set()
            release.wait(60)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(60)
        status = main(["run", *QUICK, "--out", str(out), "--overwrite"])
    finally:
        release.set()
        holder.join()
    assert status == 1
    assert "in use by another run" in one_line_error(capsys)
    assert not (out / "config.json").exists()


def test_reproduce_records_the_warnings_of_its_figures(
    campaign_files, tmp_path, capsys
):
    """#18.9: the figures' replayed fits printed NonDiscriminatingFitWarning."""
    import warnings

    data, process = campaign_files
    out = tmp_path / "out"
    argv = ["reproduce", "custom", "--data", str(data), "--process", str(process)]
    argv += ["--label-column", "state", "--repeats", "1", "--methods", "mrvm1-evpi"]
    argv += ["--n-jobs", "1", "--no-progress", "--out", str(out)]
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        assert main(argv) == 0
    assert [str(w.message) for w in shown] == []
    summary = (out / "summary.md").read_text()
    # mRVM1's replayed fits on this campaign raise a warning (which one depends
    # on the model: LostClassWarning since the bounded precision updates).
    found = re.search(r"the replayed fits raised (\w+Warning) \d+ time", summary)
    assert found, summary
    err = capsys.readouterr().err
    assert f"skrbal: note: drawing the figures raised {found[1]}" in err
