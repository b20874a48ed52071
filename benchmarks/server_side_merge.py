"""Merge saved outputs of benchmarks/server_side.py into one table, later runs replacing earlier rows.

    .venv/bin/python benchmarks/server_side_merge.py RUN1.txt RUN2.txt ...           # summary and worst rows
    .venv/bin/python benchmarks/server_side_merge.py RUN*.txt --table > merged.txt   # every row, in grid order

A grid of Kafka's JMH shapes takes hours on two cores, so it is run in parts, and a part re-run after
a port changed should replace the rows it measured again. Each row is keyed by its shape and
assignor; a row from a later file replaces one from an earlier file. The summary says how many rows
there are, how many answered differently from Kafka's jar (``same`` NO), how many are above the
ratio target, and lists the worst rows with the file each came from. Exit 1 when a row is above the
target or differs from Kafka's answer, 2 on a file that is not a benchmark output.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROW = re.compile(r"^(?P<members>\d+)x(?P<partitions>\d+) \((?P<topics>\d+)t\) (?P<sub>hom|het) (?P<kind>full|incr) "
                 r"racks (?P<racks>on|off)\s+(?P<assignor>uniform|consumer-range)\s")
# after the assignor: java s, java MB, port s, port MB, the printed ratio, same
FIGURES = re.compile(r"\s(?P<java>[0-9.]+)\s+\d+\s+(?P<port>[0-9.]+|nan)\s+\d+\s+(?:[0-9.]+|nan|inf)x\s+(?P<same>yes|NO|-)\s")


def _rows(paths: list[Path]) -> dict[tuple, tuple[str, str]]:
    rows: dict[tuple, tuple[str, str]] = {}
    for path in paths:
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise SystemExit(f"{path}: cannot read: {exc.strerror}") from None
        found = 0
        for line in lines:
            m = ROW.match(line)
            if m is None:
                continue
            found += 1
            key = (int(m["members"]), int(m["partitions"]) // int(m["members"]), int(m["topics"]), m["sub"] != "hom",
                   m["kind"] != "full", m["racks"] != "off", m["assignor"] != "uniform")
            rows[key] = (line.rstrip(), path.name)
        if not found:
            print(f"{path}: no benchmark row (is it benchmarks/server_side.py's output?)", file=sys.stderr)
            raise SystemExit(2)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path, help="server_side.py outputs, oldest first")
    parser.add_argument("--table", action="store_true", help="print every merged row, in grid order")
    parser.add_argument("--target", type=float, default=5.0, help="the port/Java ratio target (default 5)")
    parser.add_argument("--worst", type=int, default=10, help="how many of the worst rows to list")
    args = parser.parse_args(argv)
    rows = _rows(args.runs)
    graded = []
    for key in sorted(rows):
        line, source = rows[key]
        m = FIGURES.search(line, ROW.match(line).end() - 1)
        # from the two times, not the printed one-decimal ratio (5.02 prints as 5.0x)
        ratio = float(m["port"]) / float(m["java"]) if m and float(m["java"]) > 0 else float("nan")
        graded.append((ratio, m["same"] if m else "-", line, source))
    if args.table:
        for _, _, line, _ in graded:
            print(line)
        return 0
    over = [g for g in graded if not g[0] <= args.target]  # nan (a port error) counts as over
    differ = [g for g in graded if g[1] != "yes"]
    print(f"{len(graded)} rows; {len(differ)} differ from Kafka's answer; {len(over)} above {args.target:g}x")
    for ratio, _, line, source in sorted(graded, key=lambda g: -g[0] if g[0] == g[0] else float("-inf"))[:args.worst]:
        print(f"{line[:110]}  {ratio:.2f}x  [{source}]")
    return 1 if over or differ else 0


if __name__ == "__main__":
    sys.exit(main())
