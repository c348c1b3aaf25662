#!/usr/bin/env python3
"""Limits probe: big requests against the release server (SQLite, one worker), as a careless
or hostile client would send them. Prints what each got and how long it took.

    cargo build --release --bin puzzled && python3 benches/load/limits_probe.py
"""
import json, os, signal, statistics, subprocess, tempfile, time, urllib.request

BIN = os.environ.get("PUZZLED_BIN", os.path.join(os.path.dirname(__file__), "../../target/release/puzzled"))
PORT = 18090

def start(extra=(), workers=1):
    d = os.path.join(tempfile.gettempdir(), f"puzzled-probe-{time.time_ns()}")
    os.makedirs(d)
    env = dict(os.environ, PUZZLED_RATE_LIMIT="0", PUZZLED_WARM_TABLES="false")
    p = subprocess.Popen([BIN, "serve", "--bind", f"127.0.0.1:{PORT}", "--database-url", f"sqlite://{d}/j.db",
                          "--data-dir", f"{d}/t", "--workers", str(workers), *extra],
                         env=env, stdout=subprocess.DEVNULL, stderr=open(f"{d}/log", "w"))
    for _ in range(100):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{PORT}/healthz", timeout=1); break
        except Exception:
            time.sleep(0.05)
    assert p.poll() is None, 'the server did not start'
    return p

def call(method, path, body=None, timeout=120):
    req = urllib.request.Request(f"http://127.0.0.1:{PORT}{path}", method=method,
                                 data=None if body is None else json.dumps(body).encode(),
                                 headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")

def hwm(p):
    for line in open(f"/proc/{p.pid}/status"):
        if line.startswith("VmHWM"):
            return int(line.split()[1]) // 1024

def stop(p):
    p.send_signal(signal.SIGTERM)
    t = time.time(); p.wait(); return time.time() - t

def room(side, boxes):
    """As tests/limits.rs's open_room: boxes on every other square of every other row from
    the top, goals likewise from the bottom."""
    rows = [[" "] * side for _ in range(side)]
    rows[0][0] = "@"; per_row = (side - 3) // 2
    for k in range(boxes):
        col = 2 + 2 * (k % per_row)
        rows[2 + 2 * (k // per_row)][col] = "$"
        rows[side - 3 - 2 * (k // per_row)][col] = "."
    wall = "#" * (side + 2)
    return "\n".join([wall] + ["#" + "".join(r) + "#" for r in rows] + [wall])

def median(xs): return round(statistics.median(xs), 3)

def main():
    out = {}
    # 1. Sokoban 100x100, 500 boxes, timeout 5 s: end after submission; cancel latency; SIGTERM.
    level = room(98, 500)
    for objective in ["any", "optimal"]:
        ends, cancels = [], []
        for _ in range(3):
            p = start()
            t = time.time()
            s, job = call("POST", "/v1/jobs", {"puzzle": {"type": "sokoban", "level": level}, "objective": objective, "limits": {"timeout_ms": 5000}})
            s, done = call("GET", f"/v1/jobs/{job['id']}?wait=60")
            ends.append(time.time() - t)
            assert done["status"] == "exhausted" and done["reason"] == "timeout", done
            s, job = call("POST", "/v1/jobs", {"puzzle": {"type": "sokoban", "level": level}, "objective": objective, "limits": {"timeout_ms": 60000}})
            while call("GET", f"/v1/jobs/{job['id']}")[1]["status"] != "running": time.sleep(0.05)
            time.sleep(1)
            t = time.time(); call("POST", f"/v1/jobs/{job['id']}/cancel", {})
            s, done = call("GET", f"/v1/jobs/{job['id']}?wait=60")
            cancels.append(time.time() - t)
            assert done["status"] == "cancelled", done
            stop(p)
        out[f"1 sokoban {objective}: end after submit (s), cancel latency (s)"] = (median(ends), median(cancels))
    p = start(["--shutdown-grace-ms", "2000"])
    s, job = call("POST", "/v1/jobs", {"puzzle": {"type": "sokoban", "level": level}, "limits": {"timeout_ms": 60000}})
    while call("GET", f"/v1/jobs/{job['id']}")[1]["status"] != "running": time.sleep(0.05)
    out["1 sokoban: SIGTERM to exit, grace 2 s (s)"] = round(stop(p), 3)

    # 2. 4x4 one move from a permuted goal, pattern-database 7-8, timeout 5 s.
    goal = [2, 1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0]
    tiles = goal[:]; tiles[14], tiles[15] = tiles[15], tiles[14]
    p = start()
    times = []
    for _ in range(5):
        t = time.time()
        s, prob = call("POST", "/v1/jobs", {"puzzle": {"type": "sliding", "tiles": tiles, "goal": goal}, "heuristic": "pattern-database", "partition": "7-8", "limits": {"timeout_ms": 5000}})
        times.append(time.time() - t)
        assert s == 422, (s, prob)
    s, done = call("POST", "/v1/solve", {"puzzle": {"type": "sliding", "tiles": tiles, "goal": goal}, "limits": {"timeout_ms": 5000}})
    out["2 pdb 7-8: 422 in (ms, median of 5); auto answer; pointer; RSS peak MiB"] = (round(median(times) * 1000, 1), done["status"], done["result"].get("heuristic"), prob.get("pointer"), hwm(p))
    stop(p)

    # 3 and 6. Queued BFS and A* on an 8x8 board 400 moves out, 20 s limit.
    T = [26,1,12,2,27,4,16,8,11,35,10,5,23,15,6,7,25,34,14,17,20,30,24,32,50,3,9,21,13,22,28,0,58,52,53,51,31,46,40,37,19,57,29,59,45,60,39,56,42,49,33,41,44,48,54,47,18,43,62,55,36,61,63,38]
    for cap in [64, 2048, 16384]:
        for alg in ["bfs", "a-star"]:
            p = start(["--max-job-memory-mib", str(cap)])
            base = hwm(p)
            t = time.time()
            s, job = call("POST", "/v1/jobs", {"puzzle": {"type": "sliding", "tiles": T}, "algorithm": alg, "limits": {"timeout_ms": 20000}})
            s, done = call("GET", f"/v1/jobs/{job['id']}?wait=60")
            out[f"3/6 {alg} cap {cap} MiB: reason, end after submit (s), RSS peak - start (MiB)"] = (done["status"], done.get("reason"), done.get("error"), round(time.time() - t, 2), hwm(p) - base)
            stop(p)
    print(json.dumps(out, indent=1))

if __name__ == '__main__':
    main()
