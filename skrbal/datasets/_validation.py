"""Moved to skrbal._validation, shared with the studies."""

from skrbal._validation import check_int, check_positive_real  # noqa: F401
