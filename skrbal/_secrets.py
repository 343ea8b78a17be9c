"""One masking rule for the passwords of database URLs, wherever text goes out.

A store URL may carry a password (``postgresql://user:secret@host/db``). Every
message, repr, parameter display, log line, page and export that may hold
such a URL passes through :func:`mask_passwords`, which replaces whatever
stands between ``user:`` and the last ``@`` of the URL's authority with
``***``. It works on any text, not only on URLs SQLAlchemy can parse: a
mistyped scheme (``postgres://``, ``mysql://``) or a malformed URL is masked
too, so the message that refuses it cannot echo the secret.
"""

from __future__ import annotations

import re

__all__ = ["MASK", "mask_passwords"]

MASK = "***"

# scheme://user:password@ -- the password runs to the last "@" before the
# next blank or quote: a raw "@" or "/" in a password is masked whole (at
# worst a host is masked too), and so is an URL-encoded one.
_PASSWORD = re.compile(
    r"(?P<head>[A-Za-z][A-Za-z0-9+.\-]*://[^:/@\s'\"]*):(?P<secret>[^\s'\"]*)@"
)


def mask_passwords(text: str) -> str:
    """``text`` with the password of every URL in it replaced by ``***``.

    Parameters
    ----------
    text : str
        Any text: a message, a repr, a URL.

    Returns
    -------
    masked : str

    Examples
    --------
    >>> from skrbal._secrets import mask_passwords
    >>> mask_passwords("store postgres://bridge:s3cret@db:5432/fleet is down")
    'store postgres://bridge:***@db:5432/fleet is down'
    >>> mask_passwords("agents.db")
    'agents.db'
    """
    return _PASSWORD.sub(lambda m: f"{m['head']}:{MASK}@", text)
