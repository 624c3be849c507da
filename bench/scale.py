"""bench/scale.sh's driver: a result folder of N entries in the on-disk layout, then the
service started on it: start to first HIT, the index's memory, hits while it fills, and
misses and hits while it evicts under a cap below what the folder holds. Standard library
only; wrk does the load."""
import json, os, random, re, shutil, signal, statistics, subprocess, sys, time, urllib.request

def get(url, timeout=5):
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), b""
    except OSError:
        return 0, {}, b""

def metric(port, name):
    s, _, body = get(f"http://127.0.0.1:{port}/metrics")
    m = re.search(rf"^{name} (\d+)", body.decode(), re.M) if s == 200 else None
    return int(m.group(1)) if m else None

def rss_kb(pid):
    """The service's resident memory with its render workers' (they are its children)."""
    total = 0
    for p in [pid] + children(pid):
        try:
            total += int(re.search(r"VmRSS:\s+(\d+)", open(f"/proc/{p}/status").read()).group(1))
        except (OSError, AttributeError):
            pass
    return total

def main_rss_kb(pid):
    return int(re.search(r"VmRSS:\s+(\d+)", open(f"/proc/{pid}/status").read()).group(1))

def children(pid):
    try:
        return [int(c) for c in open(f"/proc/{pid}/task/{pid}/children").read().split()]
    except OSError:
        return []

RUNNING = []

class Service:
    def __init__(self, binary, workdir, port, images, cache, max_bytes, log):
        env = dict(os.environ, ASPECT_LOG_ACCESS="false", ASPECT_CACHE_MAXBYTES=str(max_bytes) if max_bytes < 1 << 39 else "1TiB")
        self.port = port
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            [binary, "serve", "--port", str(port), "--images", images, "--cache-dir", cache],
            cwd=workdir, env=env, stdout=subprocess.DEVNULL, stderr=open(log, "ab"), start_new_session=True)
        RUNNING.append(self)

    def url(self, path):
        return f"http://127.0.0.1:{self.port}{path}"

    def stop(self):
        if self.proc.poll() is not None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        self.proc.wait(30)

def first_hit(svc, path, limit=300):
    """Seconds from the service's start to its first answer with X-Cache: HIT."""
    while time.monotonic() - svc.started < limit:
        if svc.proc.poll() is not None:
            raise SystemExit(f"the service on port {svc.port} ended (exit {svc.proc.returncode}): see its log")
        s, h, _ = get(svc.url(path), timeout=2)
        if s == 200 and h.get("X-Cache") == "HIT":
            return time.monotonic() - svc.started
        time.sleep(0.005)
    raise SystemExit(f"no HIT within {limit} s")

def wait_entries(svc, n, limit=600):
    """Seconds from start until the index holds n entries (the fill is done)."""
    while time.monotonic() - svc.started < limit:
        e = metric(svc.port, "aspect_cache_entries")
        if e is not None and e >= n:
            return time.monotonic() - svc.started
        time.sleep(0.05)
    return float("nan")

def wrk(url, seconds, conns=2, script=None):
    cmd = ["wrk", "-t1", f"-c{conns}", f"-d{seconds}s", "--latency"]
    if script:
        cmd += ["-s", script]
    return subprocess.Popen(cmd + [url], stdout=subprocess.PIPE, text=True)

def ms(v):
    m = re.match(r"([\d.]+)(us|ms|s)", v)
    x = float(m.group(1))
    return x / 1000 if m.group(2) == "us" else x * 1000 if m.group(2) == "s" else x

def latency(text):
    p = {q: ms(re.search(rf"^\s+{q}%\s+(\S+)", text, re.M).group(1)) for q in ("50", "99")}
    p["max"] = ms(re.search(r"Latency\s+\S+\s+\S+\s+(\S+)", text).group(1))
    p["n"] = int(re.search(r"(\d+) requests in", text).group(1))
    errs = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    p["errors"] = int(errs.group(1)) if errs else 0
    return p

def du(path):
    return int(subprocess.run(["du", "-s", "--block-size=1", path], capture_output=True, text=True).stdout.split()[0])

def occupied_by_files(path):
    """What the regular files under path occupy (st_blocks), as a cap that counts blocks sees it."""
    total = 0
    for root, _, names in os.walk(path):
        for name in names:
            try:
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
            except OSError:
                pass
    return total

def key_file(cache):
    for shard in os.listdir(cache):
        if len(shard) == 2:
            for name in os.listdir(os.path.join(cache, shard)):
                if not name.startswith("."):
                    return shard, name
    raise SystemExit(f"no result in {cache}")

def populate(cache, n, real, body):
    """n results of `body` under random keys in XX/KEY.jpeg, written oldest first (an hour
    back to now), and the real results (shard, name, bytes) the services will be asked."""
    rng = random.Random(38)
    now = time.time()
    for i in range(n):
        k = "%064x" % rng.getrandbits(256)
        d = os.path.join(cache, k[:2])
        if i < 256 or not os.path.isdir(d):
            os.makedirs(d, exist_ok=True)
        p = os.path.join(d, k + ".jpeg")
        fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.write(fd, body)
        os.close(fd)
        t = now - 3600 + 3600 * i / n
        os.utime(p, (t, t))
    for shard, name, data in real:
        os.makedirs(os.path.join(cache, shard), exist_ok=True)
        with open(os.path.join(cache, shard, name), "wb") as f:
            f.write(data)

def main():
    out, images, sizes, builds = sys.argv[1], sys.argv[2], [int(s) for s in sys.argv[3].split()], sys.argv[4:]
    builds = [(builds[i], builds[i + 1], builds[i + 2]) for i in range(0, len(builds), 3)]  # name, bin, dir
    hit_path = "/thumb?src=big.jpg&w=300&ratio=4:3&mode=fill&format=jpeg"
    miss_lua = os.path.join(out, "widths.lua")
    open(miss_lua, "w").write(
        "local n = 0\nrequest = function()\n  n = n + 1\n"
        "  local path = wrk.path:gsub('w=300', 'w=' .. tostring(100 + n % 900), 1)\n"
        "  return wrk.format(nil, path)\nend\n")
    # Each build's real result, and its memory with an empty folder (after the same load).
    real, empty_rss = [], {}
    for name, binary, workdir in builds:
        cache = os.path.join(out, f"first-{name}")
        svc = Service(binary, workdir, 18380, images, cache, 1 << 40, os.path.join(out, f"{name}.log"))
        first_hit(svc, hit_path, 60)
        p = wrk(svc.url(hit_path), 3)
        p.communicate()
        empty_rss[name] = main_rss_kb(svc.proc.pid)
        svc.stop()
        shard, fname = key_file(cache)
        real.append((shard, fname, open(os.path.join(cache, shard, fname), "rb").read()))
    body = bytes(random.Random(1).getrandbits(8) for _ in range(1500))
    rows = []
    for n in sizes:
        folder = os.path.join(out, f"folder-{n}")
        t0 = time.monotonic()
        populate(folder, n, real, body)
        written = time.monotonic() - t0
        occupied = du(folder)
        for name, binary, workdir in builds:
            work = os.path.join(out, f"run-{n}-{name}")
            shutil.rmtree(work, ignore_errors=True)
            subprocess.run(["cp", "-a", folder, work], check=True)
            log = os.path.join(out, f"{name}.log")
            # 1. No cap in reach: ready, the index's memory, hits while it fills, then hits
            #    beside misses with nothing to evict (the control for step 2).
            svc = Service(binary, workdir, 18381, images, work, 1 << 40, log)
            ready = first_hit(svc, hit_path)
            during = wrk(svc.url(hit_path), 5)
            indexed = wait_entries(svc, n + 1)
            hits_filling = latency(during.communicate()[0])
            time.sleep(1)
            rss = main_rss_kb(svc.proc.pid)
            counted = metric(svc.port, "aspect_cache_bytes")
            hits = latency(wrk(svc.url(hit_path), 5).communicate()[0])
            m = wrk(svc.url(hit_path), 15, conns=2, script=miss_lua)
            h = wrk(svc.url(hit_path), 15, conns=1)
            misses_free, hits_free = latency(m.communicate()[0]), latency(h.communicate()[0])
            svc.stop()
            # 2. A cap of 90% of what the build counts the folder as: trimmed in the
            #    background (or on the first write), then each miss evicts; misses and
            #    hits side by side meanwhile; then the time until the count is under the
            #    cap, and what the folder's files occupy against it.
            cap = counted * 9 // 10
            svc = Service(binary, workdir, 18382, images, work, cap, log)
            ready_capped = first_hit(svc, hit_path)
            m = wrk(svc.url(hit_path), 15, conns=2, script=miss_lua)
            h = wrk(svc.url(hit_path), 15, conns=1)
            misses, hits_evicting = latency(m.communicate()[0]), latency(h.communicate()[0])
            # Done: the build says its index is no longer filling or trimming (a build
            # without that gauge: its count is under the cap).
            trimmed = float("nan")
            while time.monotonic() - svc.started < 300:
                b, indexing = metric(svc.port, "aspect_cache_bytes"), metric(svc.port, "aspect_cache_indexing")
                if indexing == 0 or (indexing is None and b is not None and b <= cap):
                    trimmed = time.monotonic() - svc.started
                    break
                time.sleep(0.2)
            time.sleep(1)
            files, total = occupied_by_files(work), du(work)
            svc.stop()
            shutil.rmtree(work, ignore_errors=True)
            rows.append(dict(
                n=n, build=name, written_s=round(written, 1), ready_s=round(ready, 3), indexed_s=round(indexed, 2),
                rss_mb=round(rss / 1024, 1), bytes_per_entry=round((rss - empty_rss[name]) * 1024 / n, 1),
                hits_filling=hits_filling, hits=hits, misses_free=misses_free, hits_free=hits_free,
                ready_capped_s=round(ready_capped, 3), misses=misses, hits_evicting=hits_evicting,
                trimmed_s=round(trimmed, 1), cap_mb=round(cap / 2**20, 1), files_mb=round(files / 2**20, 1),
                du_mb=round(total / 2**20, 1), over_cap_kb=round((files - cap) / 1024, 1)))
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
        shutil.rmtree(folder, ignore_errors=True)
    json.dump(rows, open(os.path.join(out, "scale.json"), "w"), indent=1)
    print("| results | build | first HIT after start | index filled | RSS | bytes an entry | hits while filling p50 / p99 / max |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    for r in rows:
        hf = r["hits_filling"]
        print(f"| {r['n']:,} | {r['build']} | {r['ready_s']} s | {r['indexed_s']} s | {r['rss_mb']} MB | {r['bytes_per_entry']} "
              f"| {hf['50']:.2f} / {hf['99']:.2f} / {hf['max']:.1f} ms |")
    print()
    print("Misses (a new width each, wrk -c2) and hits (wrk -c1) side by side for 15 s: with nothing to evict, "
          "then with the cap at 90% of what the build counts (p50 / p99 / max, ms):")
    print()
    print("| results | build | misses, no eviction | hits, no eviction | first HIT with the cap | misses, evicting | hits, evicting | under the cap after | cap | files occupy | du |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    def l(x): return f"{x['50']:.1f} / {x['99']:.1f} / {x['max']:.1f}"
    for r in rows:
        print(f"| {r['n']:,} | {r['build']} | {l(r['misses_free'])} | {l(r['hits_free'])} | {r['ready_capped_s']} s "
              f"| {l(r['misses'])} | {l(r['hits_evicting'])} | {r['trimmed_s']} s | {r['cap_mb']} MB | {r['files_mb']} MB | {r['du_mb']} MB |")

if __name__ == "__main__":
    try:
        main()
    finally:
        for svc in RUNNING:
            svc.stop()
