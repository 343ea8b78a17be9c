"""The schema version this code writes, apart from the tables' definitions.

So that a reader without SQLAlchemy (``skrbal agent status`` on a SQLite
file, see ``_summary``) can check a store's version as the store does, and
a call's key be checked against its column's length without importing the
tables (``_idempotency``, on the path of a command-line call).
"""

SCHEMA_VERSION = 1
# Longest client key of an idempotent call (skrbal_events.client_key).
MAX_KEY_LENGTH = 200
