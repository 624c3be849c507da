"""Mixed bad traffic for the soak: malformed and invalid requests, slow clients that
dribble their headers, clients that disconnect mid-response. Prints counts by outcome."""
import random, socket, sys, time, collections

port, seconds = int(sys.argv[1]), float(sys.argv[2])
rng = random.Random(7)
counts = collections.Counter()
bad = [b"GARBAGE\r\n\r\n", b"GET /thumb?src=landscape.jpg&w=abc HTTP/1.1\r\nHost: x\r\n\r\n",
       b"GET /thumb?src=../etc/passwd&w=10 HTTP/1.1\r\nHost: x\r\n\r\n", b"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n",
       b"POST /thumb HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc", b"GET / HTTP/1.1\r\nHost : x\r\n\r\n",
       b"GET /thumb?src=missing.jpg&w=10 HTTP/1.1\r\nHost: x\r\n\r\n", b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\n\r\n"]

def status_of(s):
    data = b""
    while b"\r\n" not in data:
        chunk = s.recv(4096)
        if not chunk:
            return "closed"
        data += chunk
    return data.split(b" ")[1].decode()

end = time.time() + seconds
while time.time() < end:
    kind = rng.random()
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        if kind < 0.6:
            s.sendall(rng.choice(bad))
            counts["bad->" + status_of(s)] += 1
        elif kind < 0.8:
            # A slow client: a header byte every 0.3 s, past the header timeout.
            s.sendall(b"GET /healthz HTTP/1.1\r\n")
            try:
                for b in b"X-Slow: 1234567890":
                    s.sendall(bytes([b]))
                    time.sleep(0.3)
            except OSError:
                pass  # the server answered 408 and closed while this client dribbled
            counts["slow->" + status_of(s)] += 1
        else:
            # A client that leaves mid-response.
            s.sendall(b"GET /thumb?src=landscape.jpg&w=1600&format=png HTTP/1.1\r\nHost: x\r\n\r\n")
            s.recv(100)
            counts["left"] += 1
        s.close()
    except OSError as e:
        counts["error:" + type(e).__name__] += 1
for k, v in sorted(counts.items()):
    print(f"{k} {v}")
