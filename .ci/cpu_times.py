"""Sum the CPU seconds of a test run by file, and list the costliest tests.

    python -m pytest -n 2 --cpu-times=times.tsv
    python .ci/cpu_times.py times.tsv [--top 40]

Each line of ``times.tsv`` (tests/conftest.py writes it) is a test id, the CPU
seconds of the test's own process and of the subprocesses it waited for, and
its wall seconds. CPU seconds compare across runs on a loaded machine; wall
seconds do not.
"""

import argparse
from collections import defaultdict


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("times")
    parser.add_argument("--top", type=int, default=40)
    args = parser.parse_args(argv)
    tests = []
    with open(args.times) as lines:
        for line in lines:
            test_id, own, children, wall = line.rstrip("\n").rsplit("\t", 3)
            tests.append((test_id, float(own), float(children), float(wall)))
    total = sum(own + children for _, own, children, _ in tests)
    children = sum(c for _, _, c, _ in tests)
    print(f"{len(tests)} tests, {total:.1f} CPU s ({children:.1f} in subprocesses)")
    files = defaultdict(lambda: [0, 0.0])
    for test_id, own, child, _ in tests:
        entry = files[test_id.split("::")[0]]
        entry[0] += 1
        entry[1] += own + child
    print("\nCPU s  share  tests  file")
    for name, (n, cpu) in sorted(files.items(), key=lambda kv: -kv[1][1])[: args.top]:
        print(f"{cpu:5.1f}  {100 * cpu / total:4.1f}%  {n:5d}  {name}")
    print("\nCPU s  (subprocesses)  wall s  test")
    tests.sort(key=lambda t: -(t[1] + t[2]))
    for test_id, own, child, wall in tests[: args.top]:
        print(f"{own + child:5.2f}  ({child:5.2f})  {wall:6.1f}  {test_id}")


if __name__ == "__main__":
    main()
