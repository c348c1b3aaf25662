#!/usr/bin/env python3
"""Submit-to-finished latency through the queue: POST /v1/jobs, then GET ?wait until done.

    python3 benches/load/submit_wait.py [--url http://127.0.0.1:8080] [--jobs 500] [--clients 1]

Each client keeps one connection and submits the 8-puzzles of benches/data/8puzzle100.txt in
turn; prints the median, p90 and p99 time from sending the POST to reading the finished job.
"""
import argparse
import http.client
import json
import statistics
import threading
import time
import urllib.parse
from pathlib import Path

SUITE = Path(__file__).resolve().parents[1] / "data" / "8puzzle100.txt"


def boards():
    for line in SUITE.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            numbers = [int(n) for n in line.split()]
            yield numbers[1:10]


def client(url, jobs, tiles, latencies, failures):
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=60)
    for i in range(jobs):
        body = json.dumps({"puzzle": {"type": "sliding", "tiles": tiles[i % len(tiles)]}})
        started = time.perf_counter()
        conn.request("POST", "/v1/jobs", body, {"content-type": "application/json"})
        response = conn.getresponse()
        job = json.loads(response.read())
        if response.status != 202:
            failures.append(response.status)
            continue
        conn.request("GET", f"/v1/jobs/{job['id']}?wait=30")
        response = conn.getresponse()
        done = json.loads(response.read())
        elapsed = time.perf_counter() - started
        if done["status"] != "solved":
            failures.append(done["status"])
        latencies.append(elapsed)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", default="http://127.0.0.1:8080")
    parser.add_argument("--jobs", type=int, default=500, help="per client")
    parser.add_argument("--clients", type=int, default=1)
    args = parser.parse_args()
    tiles = list(boards())
    latencies, failures = [], []
    threads = [
        threading.Thread(target=client, args=(args.url, args.jobs, tiles, latencies, failures))
        for _ in range(args.clients)
    ]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - started
    latencies.sort()
    ms = lambda q: 1000 * latencies[min(len(latencies) - 1, int(q * len(latencies)))]
    print(
        f"jobs {len(latencies)} failures {len(failures)} clients {args.clients} "
        f"jobs/s {len(latencies) / wall:.0f} median {1000 * statistics.median(latencies):.2f} ms "
        f"p90 {ms(0.90):.2f} ms p99 {ms(0.99):.2f} ms"
    )
    if failures:
        raise SystemExit(f"unexpected answers: {failures[:10]}")


if __name__ == "__main__":
    main()
