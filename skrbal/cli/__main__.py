"""``python -m skrbal.cli``: the same as the ``skrbal`` command."""

import sys

from skrbal.cli import main

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
