"""MATLAB files as they circulate: variables, structs and what they hold."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import scipy.io
from scipy.io.matlab import MatReadError

__all__ = ["describe_mat", "find_arrays", "mat_entries", "mat_value", "read_mat"]


def read_mat(path: Path) -> dict:
    """The variables of a ``.mat`` file, structs as nested dicts.

    ``simplify_cells=True`` turns a MATLAB struct into a dict of its fields
    and squeezes singleton dimensions, so a column vector becomes 1-d.
    """
    try:
        contents = scipy.io.loadmat(path, simplify_cells=True)
    except NotImplementedError as exc:
        raise ValueError(
            f"{path} is a MATLAB v7.3 (HDF5) file, which scipy cannot read; "
            "re-save it with save(..., '-v7') or export the frequencies to CSV."
        ) from exc
    except (MatReadError, ValueError, TypeError, OSError) as exc:
        raise ValueError(f"could not read {path} as a MATLAB file: {exc}") from exc
    return {
        name: value for name, value in contents.items() if not name.startswith("__")
    }


def mat_entries(value, path: str = "") -> Iterator[tuple[str, object]]:
    """Every entry of a loaded ``.mat`` file, depth first, with its key path.

    Struct fields are joined with dots (``databasez24.data``); elements of a
    struct or cell array get an index (``runs[1].data``).
    """
    if path:
        yield path, value
    if isinstance(value, dict):
        for name, field in value.items():
            yield from mat_entries(field, f"{path}.{name}" if path else name)
    elif isinstance(value, list) or (
        isinstance(value, np.ndarray) and value.dtype == object
    ):
        for index, item in enumerate(np.ravel(np.asarray(value, dtype=object))):
            yield from mat_entries(item, f"{path}[{index}]")


def _summary(value) -> str:
    if isinstance(value, dict):
        names = list(value)
        if len(names) > 10:
            return f"struct with {len(names)} fields {names[:10]} ..."
        return f"struct with fields {names}"
    if isinstance(value, list):
        return f"cell or struct array of {len(value)} elements"
    if isinstance(value, str):
        text = value if len(value) <= 40 else value[:37] + "..."
        return f"text {text!r}"
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            return f"cell or struct array of shape {value.shape}"
        return f"{value.dtype} array of shape {value.shape}"
    return f"{type(value).__name__} {value!r}"


_DESCRIBED_ENTRIES = 40


def describe_mat(contents: dict) -> str:
    """What a ``.mat`` file holds: every variable and field, shape and dtype.

    The first 40 entries, depth first, then how many more there are.
    """
    lines = [f"{path}: {_summary(value)}" for path, value in mat_entries(contents)]
    if not lines:
        return "no variables"
    more = len(lines) - _DESCRIBED_ENTRIES
    shown = "; ".join(lines[:_DESCRIBED_ENTRIES])
    return shown + (f"; and {more} more entries" if more > 0 else "")


def mat_value(contents: dict, key: str, path: Path):
    """The entry at a dotted key path (``databasez24.data``), or a clear error."""
    entries = dict(mat_entries(contents))
    if key in entries:
        return entries[key]
    raise ValueError(
        f"{path} has no variable {key!r}; it holds {sorted(contents)} "
        f"({describe_mat(contents)}). Pass the key path of the array, struct "
        "fields joined by dots (e.g. 'databasez24.data')."
    )


def find_arrays(
    contents: dict, accept: Callable[[str, np.ndarray], bool]
) -> list[tuple[str, np.ndarray]]:
    """The numeric arrays anywhere in the file that ``accept(path, array)``."""
    return [
        (path, value)
        for path, value in mat_entries(contents)
        if isinstance(value, np.ndarray)
        and value.dtype.kind in "iuf"
        and accept(path, value)
    ]
