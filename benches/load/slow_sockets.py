#!/usr/bin/env python3
"""Slow and stray sockets against the release server: half-sent headers, bodies that never
come, an endless chunked body, a huge Content-Length, many sockets from one client, and a
stray socket at SIGTERM.

    cargo build --release --bin puzzled && python3 benches/load/slow_sockets.py
"""
import json, os, select, socket, sys, time
sys.path.insert(0, os.path.dirname(__file__))
from limits_probe import start, stop, PORT  # noqa: E402  (the probe runs its cases only as a script)

def connect(src="127.0.0.1"):
    s = socket.socket(); s.bind((src, 0)); s.connect(("127.0.0.1", PORT)); return s

def closed_after(socks, limit=70):
    """Seconds until every socket is closed by the server (EOF or reset), or None."""
    t = time.time(); open_ = list(socks)
    while open_ and time.time() - t < limit:
        r, _, _ = select.select(open_, [], [], 0.5)
        for s in r:
            try:
                data = s.recv(4096)
            except OSError:
                data = b""
            if not data:
                open_.remove(s)
    return None if open_ else round(time.time() - t, 2)

def other_client_ms():
    s = connect("127.0.0.2"); t = time.time()
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    data = s.recv(100); return round((time.time() - t) * 1000, 1), data[:12]

out = {}
kinds = {
    "partial headers": b"GET /v1/jobs HTTP/1.1\r\nHost: x\r\n",
    "body never comes": b"POST /v1/solve HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
    "endless chunked body": b"POST /v1/solve HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{\r\n",
}
for name, first in kinds.items():
    p = start()
    socks = []
    for i in range(500):
        src = f"127.0.{1 + i // 100}.{1 + i % 100}"  # 500 clients, so the per-client cap is not what closes them
        s = connect(src); s.sendall(first); socks.append(s)
    served = other_client_ms()
    out[f"4 {name}: 500 sockets all closed after (s); another client's /healthz meanwhile"] = (closed_after(socks), served)
    stop(p)
p = start()
s = connect(); t = time.time()
s.sendall(b"POST /v1/solve HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 999999999\r\n\r\n")
line = s.recv(100).split(b"\r\n")[0]
out["4 Content-Length 999999999: answer, ms"] = (line.decode(), round((time.time() - t) * 1000, 1))
socks = [connect() for _ in range(300)]
out["4 300 sockets from one client: healthz from another (ms)"] = other_client_ms()
stop(p)
exits = []
for _ in range(3):
    p = start(["--shutdown-grace-ms", "2000"])
    s = connect(); s.sendall(b"GET /heal")
    exits.append(stop(p))
out["5 stray 'GET /heal', SIGTERM, grace 2 s: exit after (s, three runs)"] = [round(x, 2) for x in exits]
print(json.dumps(out, indent=1, default=str))
