"""Sends N identical requests on one keep-alive connection and checks each answer: the
client side of bench/callgrind/run.sh (instructions per cache hit, counted by callgrind)."""
import http.client
import sys

port, n, target = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
for i in range(n):
    conn.request("GET", target)
    r = conn.getresponse()
    body = r.read()
    if r.status != 200 or (i > 0 and r.getheader("X-Cache") != "HIT"):
        sys.exit(f"request {i}: {r.status} {r.getheader('X-Cache')}")
print(f"{n} requests, {len(body)} bytes each")
