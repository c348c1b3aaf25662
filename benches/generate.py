#!/usr/bin/env python3
"""The level generator's figures (docs/performance.md, "Level generator"), from a release
binary on one core:

    cargo build --release && python3 benches/generate.py [target/release/puzzled]

- the seed's table: `murase` on 500 random 8x8 maps with 3 boxes, three seeds;
- `reverse` speed: levels per second for 200 levels, 8x8/3 and 10x10/4, three seeds;
- the labels: median pushes and effort of 100 levels of each label (8x8/3), and the
  median pushes of hard levels on 10x10/4;
- a generate job of 20 hard 8x8 levels through the service (`/v1/solve`), three seeds.

Standard library only; every figure is a median over the runs shown beside it.
"""

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

BINARY = sys.argv[1] if len(sys.argv) > 1 else "target/release/puzzled"
SEEDS = [1, 2, 3]


def generate(*args):
    """The JSON lines of one `puzzled generate --json` run: levels, then the summary."""
    out = subprocess.run(
        [BINARY, "generate", "--json", *map(str, args)],
        check=False, capture_output=True, text=True,
    ).stdout
    lines = [json.loads(line) for line in out.splitlines()]
    return lines[:-1], lines[-1]["summary"]


def murase_table():
    print("## The seed's table: murase, 500 maps of 8x8 with 3 boxes")
    print("| seed | dropped | unsolvable | easy | good |")
    print("|---|---|---|---|---|")
    shares = {k: [] for k in ["dropped", "unsolvable", "easy", "good"]}
    for seed in SEEDS:
        _, s = generate("--method", "murase", "--size", "8x8", "--boxes", 3,
                        "--count", 500, "--candidates", 500, "--seed", seed)
        row = []
        for k in shares:
            share = 100.0 * s[k] / s["tried"]
            shares[k].append(share)
            row.append(f"{s[k]} ({share:.1f} %)")
        print(f"| {seed} | " + " | ".join(row) + " |")
    print("| median | " + " | ".join(f"{statistics.median(v):.1f} %" for v in shares.values()) + " |")
    print("| paper | 1.4 % | 49.0 % | 40.8 % | 8.8 % |")
    print()


def reverse_speed():
    print("## reverse: levels per second, 200 levels, one core")
    print("| room | boxes | runs (levels/s) | median |")
    print("|---|---|---|---|")
    for size, boxes in [("8x8", 3), ("10x10", 4)]:
        rates = []
        for seed in SEEDS:
            _, s = generate("--size", size, "--boxes", boxes, "--count", 200, "--seed", seed)
            assert s["made"] == 200, s
            rates.append(s["levels_per_second"])
        print(f"| {size} | {boxes} | {', '.join(f'{r:.0f}' for r in rates)} | {statistics.median(rates):.0f} |")
    print()


def labels():
    print("## Labels: 100 levels of each, medians")
    print("| room | boxes | label | pushes | effort | box lines | levels/s |")
    print("|---|---|---|---|---|---|---|")
    for size, boxes, names in [("8x8", 3, ["easy", "medium", "hard"]), ("10x10", 4, ["hard"])]:
        for label in names:
            levels, s = generate("--size", size, "--boxes", boxes, "--count", 100,
                                 "--difficulty", label, "--seed", 1)
            med = lambda key: statistics.median(l["features"][key] for l in levels)
            print(f"| {size} | {boxes} | {label} ({len(levels)}) | {med('pushes'):g} | {med('effort'):g} "
                  f"| {med('box_lines'):g} | {s['levels_per_second']:.1f} |")
    print()


def service_job():
    print("## A generate job of 20 hard 8x8 levels (3 boxes) through /v1/solve")
    with tempfile.TemporaryDirectory() as work:
        server = subprocess.Popen(
            [BINARY, "serve", "--bind", "127.0.0.1:0", "--database-url", f"sqlite://{work}/jobs.db",
             "--workers", "1"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "PUZZLED_WARM_TABLES": "false", "PUZZLED_RATE_LIMIT": "0"},
        )
        try:
            address = None
            for line in server.stderr:
                found = re.search(r"address=([0-9.:]+)", line)
                if found:
                    address = found.group(1)
                    break
            # Keep reading its log, so the server never blocks on a full pipe.
            threading.Thread(target=lambda: [None for _ in server.stderr], daemon=True).start()
            times = []
            for seed in SEEDS:
                body = json.dumps({"generate": {"type": "sokoban", "width": 8, "height": 8, "boxes": 3,
                                                "difficulty": "hard", "count": 20, "seed": seed}}).encode()
                request = urllib.request.Request(
                    f"http://{address}/v1/solve?wait_ms=60000", data=body,
                    headers={"content-type": "application/json"})
                started = time.monotonic()
                job = json.load(urllib.request.urlopen(request))
                took = time.monotonic() - started
                assert job["status"] == "solved" and len(job["result"]["levels"]) == 20, job["status"]
                times.append(took)
            print(f"| runs (s) | {', '.join(f'{t:.2f}' for t in times)} |")
            print(f"| median | {statistics.median(times):.2f} s |")
        finally:
            server.terminate()
            server.wait()
    print()


if __name__ == "__main__":
    murase_table()
    reverse_speed()
    labels()
    service_job()
