"""Copies of a store built once a module, for tests that each edit one.

Building an agent's store costs several times an edit and its checks, so
tests that each need the rows unedited build them once a module (on SQLite a
file, on PostgreSQL a schema of ``postgres_module_schema_url``) and copy them
into their own ``store_url``: the file itself, or the template schema's rows
inserted into the tables skrbal creates in the test's schema, as for any new
store.
"""

import re
import shutil

from sqlalchemy import func, select, text

from skrbal.online import AgentStore
from skrbal.online._sql import _schema as schema


def schema_of(url: str) -> str:
    """The schema a ``postgres_module_schema_url`` points at."""
    return re.search(r"search_path%3D(\w+)", url)[1]


def copy_store(store_url: str, sqlite_template, postgres_schema=None) -> None:
    """The template's rows at ``store_url`` (an empty store of either backend)."""
    if "://" not in store_url:
        shutil.copyfile(sqlite_template, store_url)
        return
    AgentStore(store_url).close()  # its own tables and schema version
    with AgentStore(store_url) as store, store.engine.begin() as conn:
        for table in schema.metadata.sorted_tables:  # referenced tables first
            if table is not schema.schema_version:
                name = table.name
                copy = f"INSERT INTO {name} SELECT * FROM {postgres_schema}.{name}"
                conn.execute(text(copy))
        # the next agent created gets the id it would have got
        last = conn.execute(select(func.max(schema.agents.c.agent_id))).scalar()
        sequence = "pg_get_serial_sequence('skrbal_agents', 'agent_id')"
        conn.execute(text(f"SELECT setval({sequence}, :n)"), {"n": last})
