"""The schema version this code writes, apart from the tables' definitions.

So that a reader without SQLAlchemy (``skrbal agent status`` on a SQLite
file, see ``_summary``) can check a store's version as the store does.
"""

SCHEMA_VERSION = 1
