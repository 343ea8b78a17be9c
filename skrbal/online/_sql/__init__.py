"""The SQL implementation of the agent's storage contract (SQLite, PostgreSQL).

:class:`~skrbal.online.AgentStore` implements
:class:`~skrbal.online.AgentStorage` with SQLAlchemy Core: the schema
(``_schema``), the writes of each event (``_writing``) and the reads
(``_reading``, ``_frames``), the event chain (``_chain``) and its check
(``_verify``), the per-step blocks (``_blocks``) and the writer's lock
(``_lock``). The agent reaches none of it but through the contract.
"""
