"""The README's usage example runs as printed."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_examples_run(capsys):
    """Every python block, in order, in one namespace (as a reader runs them)."""
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert len(blocks) >= 2, "the README has no python example"
    namespace = {}
    for block in blocks:
        exec(compile(block, "README.md", "exec"), namespace)
    printed = capsys.readouterr().out
    assert "decision_accuracy" in printed
    assert len(namespace["indices"]) == 3


def test_readme_quick_start_matches_makefile():
    text = README.read_text()
    makefile = (README.parent / "Makefile").read_text()
    assert "make demo" in text and "make test" in text
    assert "\ndemo:" in makefile and "\ntest:" in makefile
    ci = (README.parent / ".ci" / "run").read_text()
    assert "make test" in ci
