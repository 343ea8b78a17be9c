"""The order of the gallery: the quick start first, then by file name.

conf.py names the key by its import path, as sphinx-gallery asks, so the
configuration stays picklable.
"""

from pathlib import Path

FIRST = ("plot_quick_start.py",)


class QuickStartFirst:
    """Sort key of sphinx-gallery's ``within_subsection_order``."""

    def __init__(self, src_dir):
        self.src_dir = src_dir

    def __call__(self, filename) -> tuple[int, str]:
        name = Path(filename).name
        rank = FIRST.index(name) if name in FIRST else len(FIRST)
        return rank, name
