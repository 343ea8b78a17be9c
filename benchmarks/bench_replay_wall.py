"""Where a fleet replay's wall time goes on PostgreSQL: client, server, waits.

Run next to a throwaway PostgreSQL server on the same machine (Linux: the
server's CPU is read from ``/proc``)::

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. .ci/with-postgres nice -n 10 \\
        .venv/bin/python benchmarks/bench_replay_wall.py --structures 10 \\
        --hours 2184 [--block 168]

The fleet of ``bench_fleet_scale.py`` (``make_z24_like`` records, GaussianNB,
the Z24 process, ``CostThreshold`` per agent, every requested inspection
answered after its block) is replayed serially by
:func:`skrbal.fleet.replay_fleet` in this process. Reported: wall seconds,
CPU seconds of this process, CPU seconds of the server's processes (each
backend sampled every 0.2 s), and the round trips the replay made to the
server: statements sent through psycopg (a ping is one), executemany calls
counted once (psycopg pipelines them), and commits. What the three CPU
figures leave of the wall time is waiting: for the other side of a round
trip, or for a CPU on a loaded machine.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import threading
import time

import psycopg
from bench_fleet_scale import _fleet, _schema_url


class ServerCPU:
    """CPU seconds of a PostgreSQL server's processes, sampled as it runs."""

    def __init__(self, url: str, every: float = 0.2):
        plain = url.replace("postgresql+psycopg://", "postgresql://", 1)
        with psycopg.connect(plain) as conn:
            backend = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
            self.postmaster = self._stat(backend)[0]
        self.tick = os.sysconf("SC_CLK_TCK")
        self.seen = {}
        self._stop = threading.Event()
        self._every = every
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    @staticmethod
    def _stat(pid) -> tuple[int, int, int]:
        """ppid, utime, stime (fields 4, 14 and 15 of proc(5))."""
        with open(f"/proc/{pid}/stat") as file:
            fields = file.read().rsplit(")", 1)[1].split()
        return int(fields[1]), int(fields[11]), int(fields[12])

    def _sample(self) -> None:
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                ppid, utime, stime = self._stat(pid)
            except (OSError, IndexError, ValueError):
                continue
            if ppid == self.postmaster or int(pid) == self.postmaster:
                self.seen[pid] = utime + stime

    def _loop(self) -> None:
        while not self._stop.wait(self._every):
            self._sample()

    def seconds(self) -> float:
        """CPU seconds so far of every server process seen."""
        self._sample()
        return sum(self.seen.values()) / self.tick

    def close(self) -> None:
        self._stop.set()
        self._thread.join()


def _count_round_trips(counts) -> None:
    """Count psycopg's statements and commits (its public classes, wrapped)."""
    for cls, name in (
        (psycopg.Cursor, "execute"),
        (psycopg.Cursor, "executemany"),
        (psycopg.Connection, "commit"),
    ):
        original = getattr(cls, name)

        def counted(self, *args, _original=original, _name=name, **kwargs):
            counts[_name] += 1
            return _original(self, *args, **kwargs)

        setattr(cls, name, counted)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--structures", type=int, default=10)
    parser.add_argument("--hours", type=int, default=2184)
    parser.add_argument("--block", type=int, default=168)
    parser.add_argument("--url", default=os.environ.get("SKRBAL_TEST_POSTGRES_URL"))
    args = parser.parse_args(argv)
    if not args.url:
        parser.error("--url (or SKRBAL_TEST_POSTGRES_URL): a PostgreSQL server")
    from sklearn.naive_bayes import GaussianNB

    from skrbal import z24_decision_process
    from skrbal.budget import CostThreshold
    from skrbal.fleet import replay_fleet

    structures = _fleet(args.structures, args.hours)
    url = _schema_url(args.url)
    server = ServerCPU(args.url)
    counts = collections.Counter()
    _count_round_trips(counts)
    server0, cpu0, wall0 = server.seconds(), time.process_time(), time.perf_counter()
    summary = replay_fleet(
        url,
        structures,
        estimator=GaussianNB(),
        process=z24_decision_process(),
        budget=CostThreshold(),
        block=args.block,
    )
    wall = time.perf_counter() - wall0
    cpu = time.process_time() - cpu0
    server_cpu = server.seconds() - server0
    server.close()
    n = int(summary["n_observations"].sum())
    trips = sum(counts.values())
    row = {
        "structures": args.structures,
        "hours": args.hours,
        "block": args.block,
        "observations": n,
        "inspections": int(summary["n_inspections"].sum()),
        "wall_s": round(wall, 2),
        "client_cpu_s": round(cpu, 2),
        "server_cpu_s": round(server_cpu, 2),
        "waiting_s": round(wall - cpu - server_cpu, 2),
        "round_trips": trips,
        **{f"n_{k}": v for k, v in sorted(counts.items())},
        "ms_waited_per_round_trip": round(1e3 * (wall - cpu - server_cpu) / trips, 2),
        "obs_per_wall_s": round(n / wall),
        "obs_per_client_cpu_s": round(n / cpu),
        "obs_per_cpu_s_client_and_server": round(n / (cpu + server_cpu)),
        "peak_mb": float(summary["peak_memory_mb"].max()),
        "loadavg": open("/proc/loadavg").read().split()[:3],
    }
    print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
