"""The agent store: a SQLite file or a PostgreSQL database, via SQLAlchemy Core."""

from __future__ import annotations

import hashlib
import hmac
import os

from skrbal.online._sql._anchor import AnchorFile
from skrbal.online._sql._chain import ANCHOR_ENV, chain_secret
from skrbal.online._sql._database import Database
from skrbal.online._sql._store_reading import AgentStoreReading
from skrbal.online._sql._store_writing import AgentStoreWriting
from skrbal.online._sql._writing import label_to_json
from skrbal.online._storage import StoreError

__all__ = ["AgentStore", "StoreError", "label_to_json"]


_SYNCHRONOUS = ("full", "normal")


# The store is its readers and its writers, each side a class owning its part
# of the state (the frames reader, the writer with its held connection and
# locks); inheriting them keeps every public method, and its documentation, on
# the store itself.
class AgentStore(AgentStoreReading, AgentStoreWriting):
    """A database holding any number of named agents, isolated from each other.

    Parameters
    ----------
    url : str or os.PathLike
        A file path (a SQLite database, created if missing), ``":memory:"``
        (an in-memory SQLite database that lives as long as this object), or
        a SQLAlchemy URL: ``sqlite:///path.db`` or
        ``postgresql+psycopg://user@host:port/database`` (``postgresql://``
        is read as ``postgresql+psycopg://``).
    synchronous : {'full', 'normal'}, default='full'
        SQLite only: ``'full'`` syncs every commit to disk, so a decision
        returned to the caller survives a power cut; ``'normal'`` (in WAL
        mode) survives a crash or kill of the process but may lose the last
        commits of a power cut or operating-system crash, and saves the
        disk sync (a few milliseconds) per call. PostgreSQL commits as its
        server is configured.
    chain_key : bytes or path-like, default=None
        A secret key (at least 16 bytes, or a file holding it) that makes
        each agent's event chain an HMAC-SHA256 signature: agents created
        with it are signed, and verifying, resuming or writing them needs
        it. ``None`` reads the file named by ``SKRBAL_CHAIN_KEY_FILE``, else
        the value of ``SKRBAL_CHAIN_KEY``, else keeps plain SHA-256 hashes.
        See the Notes for what each mode detects.
    anchor_file : path-like, default=None
        A sidecar file the store appends each agent's head (its last
        event's number and hash) to after every commit, and that
        :meth:`verify` and :meth:`RiskBasedAgent.from_store` check: a store
        rolled back to before that head is refused. ``None`` reads
        ``SKRBAL_ANCHOR_FILE``, else keeps no sidecar.

    Attributes
    ----------
    engine : sqlalchemy.engine.Engine
        The connection pool.
    path : str or None
        The absolute path of a SQLite file, ``None`` otherwise.
    read_only : bool
        Whether the store is a SQLite file this process cannot write (or
        whose folder it cannot write): it is opened for reading only
        (``mode=ro``, or ``immutable=1`` without the WAL's ``-shm`` file);
        :meth:`status`, :meth:`history` and the other readers work, and
        opening an agent for writing raises :class:`StoreError`.
    display_url : str
        The URL, password hidden (for messages).
    anchor : AnchorFile or None
        The sidecar of ``anchor_file``.

    See Also
    --------
    RiskBasedAgent : The agent that writes to the store.

    Notes
    -----
    Opening a store creates the tables of ``skrbal.online._sql._schema`` if the
    database has none, and refuses a store of another schema version. The
    store only reads and writes data: configurations are JSON, never pickles,
    so opening a store cannot execute code. Reading methods
    (:meth:`agent_names`, :meth:`status`, :meth:`history`, :meth:`requests`)
    take no lock and work while an agent is writing.

    What the checks of :meth:`verify` (also run by
    :meth:`RiskBasedAgent.from_store`) detect, by mode:

    - the hash chain alone: any edit, deletion, insertion or reordering of
      events, blocks, requests, actions and commissioning rows, and
      counters that disagree with the log; not an edit by someone who
      recomputes every hash, and not a rollback (the newest events
      deleted with their rows and the counters set back, or an older copy
      of the database restored), since a truncated chain is whole;
    - with ``chain_key``: also edits with every hash recomputed by anyone
      without the key, and the removal of the signature; not a rollback to
      an earlier state the key signed;
    - with an anchor (``expected_head``, or ``anchor_file``): also a
      rollback to before the anchored event, and any rewrite of the events
      up to it, hashes recomputed or not; not a rollback or rewrite of the
      events after it (keep the anchor current), nor one by someone who can
      rewrite the anchor too.

    Examples
    --------
    >>> from skrbal.online import AgentStore
    >>> store = AgentStore(":memory:")
    >>> store.agent_names()
    []
    >>> store.close()
    """

    def __init__(
        self, url, *, synchronous: str = "full", chain_key=None, anchor_file=None
    ):
        if synchronous not in _SYNCHRONOUS:
            raise ValueError(
                f"synchronous must be one of {_SYNCHRONOUS}, got {synchronous!r}."
            )
        self._chain_key = chain_secret(chain_key)
        if anchor_file is None and os.environ.get(ANCHOR_ENV):
            anchor_file = os.environ[ANCHOR_ENV]
        self.anchor = None if anchor_file is None else AnchorFile(anchor_file)
        self.database = Database(url, synchronous)
        db = self.database
        self.engine, self.path, self.read_only = db.engine, db.path, db.read_only
        self.display_url = db.display_url
        AgentStoreWriting.__init__(self, db, self._chain_key, self.anchor)
        AgentStoreReading.__init__(self, db, self._chain_key, self.anchor)

    @property
    def chain_keyed(self) -> bool:
        """Whether the store was opened with a chain key (``chain_key``)."""
        return self._chain_key is not None

    def chain_digest(self, data: bytes) -> str:
        """The chain hash of ``data``: an HMAC-SHA256 under the store's chain
        key when it has one (:attr:`chain_keyed`), a SHA-256 otherwise.

        For chains kept beside the agents' (a fleet budget's ledger), which
        sign with the same key and never see it.

        Parameters
        ----------
        data : bytes

        Returns
        -------
        digest : str
            64 hexadecimal digits.

        Examples
        --------
        >>> from skrbal.online import AgentStore
        >>> with AgentStore(":memory:", chain_key=b"k" * 16) as store:
        ...     store.chain_keyed, len(store.chain_digest(b"event"))
        (True, 64)
        """
        if self._chain_key is None:
            return hashlib.sha256(data).hexdigest()
        return hmac.new(self._chain_key, data, hashlib.sha256).hexdigest()

    @property
    def schema_version(self) -> int:
        """Schema version of the store (equal to the code's once opened)."""
        return self.database.schema_version

    def close(self) -> None:
        """Close the store's connections."""
        AgentStoreWriting.close(self)
        self.database.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __deepcopy__(self, memo):
        # A store is a handle on a database, like a path: copies (sklearn's
        # clone of an agent, say) share it rather than open a second pool.
        return self

    def __repr__(self):
        return f"AgentStore({self.display_url!r})"
