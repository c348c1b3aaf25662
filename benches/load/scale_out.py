#!/usr/bin/env python3
"""The PostgreSQL job queue with several processes: throughput, claim latency, recovery.

    python3 benches/load/scale_out.py throughput --workers 1 --jobs 2000 --kind small
    python3 benches/load/scale_out.py throughput --workers 2 --jobs 40 --kind large
    python3 benches/load/scale_out.py recovery

Starts one `--role api` process and N `--role worker` processes (release binary, one
search thread each) on a fresh database of the local PostgreSQL, submits the jobs from
8 client threads, and waits until every job has finished. `recovery` kills a worker that
holds jobs and times how long until they run again elsewhere.
"""
import argparse
import http.client
import json
import os
import re
import signal
import statistics
import subprocess
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BINARY = ROOT / "target" / "release" / "puzzled"
ADMIN = os.environ.get("PUZZLED_TEST_POSTGRES", "postgres://postgres@127.0.0.1:5432/test")
SMALL = [[8, 6, 7, 2, 5, 4, 3, 0, 1], [4, 1, 3, 7, 2, 6, 0, 5, 8], [1, 2, 3, 4, 5, 6, 7, 0, 8]]
KORF_88 = [15, 2, 12, 11, 14, 13, 9, 5, 1, 3, 8, 7, 0, 10, 6, 4]


def psql(url, sql):
    out = subprocess.run(["psql", url, "-Atc", sql], check=True, capture_output=True, text=True)
    return out.stdout.strip()


def fresh_database(name):
    psql(ADMIN, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    psql(ADMIN, f"CREATE DATABASE {name}")
    return ADMIN.rsplit("/", 1)[0] + "/" + name


def launch(url, *args):
    env = dict(os.environ, DATABASE_URL=url, PUZZLED_BIND="127.0.0.1:0", PUZZLED_WARM_TABLES="false")
    proc = subprocess.Popen([str(BINARY), "serve", *args], env=env, stderr=subprocess.PIPE, text=True)
    for line in proc.stderr:
        found = re.search(r"address=(\S+)", line)
        if found:
            threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()
            return proc, found.group(1)
    raise SystemExit("server exited before listening")


def body(kind, i):
    if kind == "small":
        return {"puzzle": {"type": "sliding", "tiles": SMALL[i % 3]}}
    return {"puzzle": {"type": "sliding", "tiles": KORF_88, "goal": "blank-first"},
            "algorithm": "ida-star", "heuristic": "manhattan", "limits": {"max_nodes": 5_000_000}}


def submit_all(address, kind, jobs, clients=8):
    host, port = address.split(":")

    def run(start):
        conn = http.client.HTTPConnection(host, int(port), timeout=60)
        for i in range(start, jobs, clients):
            conn.request("POST", "/v1/jobs", json.dumps(body(kind, i)), {"content-type": "application/json"})
            response = conn.getresponse()
            response.read()
            assert response.status == 202, response.status

    threads = [threading.Thread(target=run, args=(c,)) for c in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def wait_finished(url, total):
    while True:
        done = int(psql(url, "SELECT count(*) FROM jobs WHERE status NOT IN ('queued', 'running')"))
        if done >= total:
            return
        time.sleep(0.05)


def metric(address, name):
    host, port = address.split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    conn.request("GET", "/metrics")
    text = conn.getresponse().read().decode()
    values = dict(line.rsplit(" ", 1) for line in text.splitlines() if line and not line.startswith("#"))
    return float(values.get(name, 0))


def throughput(args):
    url = fresh_database("puzzled_bench_queue")
    procs = [launch(url, "--role", "api", "--max-queued", "100000")]
    workers = [launch(url, "--role", "worker", "--workers", "1") for _ in range(args.workers)]
    started = time.perf_counter()
    submit_all(procs[0][1], args.kind, args.jobs)
    wait_finished(url, args.jobs)
    wall = time.perf_counter() - started
    claims = sum(metric(a, "puzzled_claim_seconds_count") for _, a in workers)
    claim_time = sum(metric(a, "puzzled_claim_seconds_sum") for _, a in workers)
    queue_ms = [float(v) for v in psql(url, "SELECT started_at - created_at FROM jobs").split()]
    print(f"{args.workers} worker process(es), {args.jobs} {args.kind} jobs: {args.jobs / wall:.1f} jobs/s "
          f"(wall {wall:.2f} s); claim statement mean {1000 * claim_time / max(claims, 1):.2f} ms "
          f"over {claims:.0f} claims; queue wait median {statistics.median(queue_ms):.0f} ms")
    for proc, _ in procs + workers:
        proc.terminate()
        proc.wait()


def recovery(args):
    url = fresh_database("puzzled_bench_recovery")
    api, address = launch(url, "--role", "api")
    doomed, _ = launch(url, "--role", "worker", "--workers", "2", "--lease-ms", str(args.lease_ms))
    survivor, _ = launch(url, "--role", "worker", "--workers", "2", "--lease-ms", str(args.lease_ms))
    submit_all(address, "large", 4, clients=1)
    prefix = f"{doomed.pid}-"
    while True:
        held = psql(url, f"SELECT id FROM jobs WHERE status = 'running' AND worker LIKE '{prefix}%'").split()
        if held:
            break
        time.sleep(0.01)
    doomed.send_signal(signal.SIGKILL)
    killed = time.perf_counter()
    ids = ",".join(f"'{i}'" for i in held)
    while psql(url, f"SELECT count(*) FROM jobs WHERE id IN ({ids}) AND attempts = 2 AND status <> 'queued'") != str(len(held)):
        time.sleep(0.01)
    print(f"lease {args.lease_ms} ms: {len(held)} job(s) of the killed worker running again "
          f"{time.perf_counter() - killed:.2f} s after the kill")
    for proc in (api, doomed, survivor):
        proc.kill()
        proc.wait()


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="what", required=True)
    t = sub.add_parser("throughput")
    t.add_argument("--workers", type=int, default=1)
    t.add_argument("--jobs", type=int, default=2000)
    t.add_argument("--kind", choices=["small", "large"], default="small")
    r = sub.add_parser("recovery")
    r.add_argument("--lease-ms", type=int, default=5000)
    args = parser.parse_args()
    {"throughput": throughput, "recovery": recovery}[args.what](args)


if __name__ == "__main__":
    main()
