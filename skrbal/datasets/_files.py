"""Text files a spreadsheet or logger writes: encodings checked, named in errors."""

from __future__ import annotations

import codecs
from pathlib import Path

__all__ = ["csv_text"]

# Byte-order marks of the encodings a spreadsheet may save "Unicode" text in;
# UTF-32 first, as its little-endian mark begins with UTF-16's.
_WIDE_ENCODINGS = (
    (codecs.BOM_UTF32_LE, "UTF-32"),
    (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"),
    (codecs.BOM_UTF16_BE, "UTF-16"),
)


def csv_text(path: Path, reader: str, raw: bytes | None = None) -> str:
    """The file as text: UTF-8 (with or without a signature) or ASCII.

    ``raw`` is the file's content when the caller has read it already (to
    hash the very bytes it parses); ``path`` then only names the file.
    """
    if raw is None:
        raw = path.read_bytes()
    for mark, encoding in _WIDE_ENCODINGS:
        if raw.startswith(mark):
            raise ValueError(
                f"{path} is encoded in {encoding}; {reader} reads UTF-8 or ASCII "
                "text. Save the CSV as UTF-8."
            )
    if b"\x00" in raw:
        raise ValueError(
            f"{path} holds NUL bytes, as UTF-16 or UTF-32 text without a "
            f"byte-order mark does; {reader} reads UTF-8 or ASCII. Save the CSV "
            "as UTF-8."
        )
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line_start = raw.rfind(b"\n", 0, exc.start) + 1
        line = raw.count(b"\n", 0, exc.start) + 1
        column = raw.count(b",", line_start, exc.start)
        raise ValueError(
            f"{path} is not UTF-8 text: byte 0x{raw[exc.start]:02x} in line {line}, "
            f"column {column} (counted from 0) is not UTF-8, as in a file saved "
            "in Latin-1 or Windows-1252. Save the CSV as UTF-8."
        ) from None
