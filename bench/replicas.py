#!/usr/bin/env python3
"""Scale-out benchmarks (docs/scale-out.md, figures in docs/performance.md).

Run under a throwaway PostgreSQL with fsync on:
  CORRAL_PG_FSYNC=on scripts/with_postgres.sh bench/replicas.py build/release [all|submit|place|takeover]

  submit    durable submissions/s through 1, 2 and 3 corrald replicas on one database:
            bench/submit_load against every replica at once (12 clients in all, split
            among them), summed; three runs each, medians.
  place     4 shards (one region each) on 2 replicas; 16,000 one-GPU jobs of 8 tenants
            queued into every region, then 1,250 nodes x 8 H100 registered through the API
            (no agents: a placed job holds its GPUs). The tenants' guarantee plus borrow
            limits add up to 8,000. Placements/s from the first node registered until
            every tenant is at its limit, the placements dropped at commit by the quota
            recount (another shard placed for the same tenant since the cycle's read),
            and whether anything was placed past the limits.
  takeover  3 replicas, 2 shards, leaseMs 2000: SIGKILL the holder of a shard, time until
            /v1/shards on a survivor names a new live holder; five kills, median.
"""
import json, os, shutil, signal, statistics, subprocess, sys, tempfile, threading, time
import urllib.request

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build/release"
WHAT = sys.argv[2] if len(sys.argv) > 2 else "all"
PG = os.environ.get("CORRAL_TEST_POSTGRES_URL")
CORRALD = os.path.join(BUILD, "src/server/corrald")
SUBMIT_LOAD = os.path.join(BUILD, "bench/submit_load")
UNLIMITED = ("tenants:\n  default: {submitRatePerSecond: 1000000, submitBurst: 1000000, "
             "maxPendingJobs: 10000000}\n")


def fresh_database(name):
    subprocess.run(["psql", "-q", PG, "-c", f"DROP DATABASE IF EXISTS {name}"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    subprocess.run(["psql", "-q", PG, "-c", f"CREATE DATABASE {name}"], check=True,
                   stdout=subprocess.DEVNULL)
    return PG.rsplit("/", 1)[0] + "/" + name


class Replica:
    def __init__(self, name, store, config, token_dir=None):
        self.name, self.store, self.config = name, store, config
        self.dir = tempfile.mkdtemp(prefix=f"corral-{name}.")
        with open(os.path.join(self.dir, "config.yaml"), "w") as f:
            f.write(config)
        self.proc = None
        self.start()

    def start(self):
        addr = os.path.join(self.dir, "corrald.addr")
        if os.path.exists(addr):
            os.remove(addr)
        log = open(os.path.join(self.dir, "log"), "a")
        self.proc = subprocess.Popen(
            [CORRALD, "--data-dir", self.dir, "--listen", "127.0.0.1:0", "--store", self.store,
             "--config", os.path.join(self.dir, "config.yaml"), "--replica", self.name,
             "--http-threads", "64"], stdout=log, stderr=log)
        for _ in range(300):
            if os.path.exists(addr) and open(addr).read().strip():
                break
            time.sleep(0.05)
        if not os.path.exists(addr):
            raise RuntimeError(f"corrald {self.name} did not start: " +
                               open(os.path.join(self.dir, "log")).read()[-2000:])
        self.addr = open(addr).read().strip()

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def token_of(replicas):
    for r in replicas:
        p = os.path.join(r.dir, "admin.token")
        if os.path.exists(p):
            return open(p).read().strip()
    raise RuntimeError("no admin token")


def call(addr, token, method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(f"http://{addr}{path}", data=data, method=method,
                                 headers={"Authorization": "Bearer " + token,
                                          "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read() or b"null") if "json" in r.headers.get("Content-Type", "") else r.read().decode()


def metric(addr, token, name):
    for line in call(addr, token, "GET", "/metrics").splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return 0.0


def start_replicas(count, store, config):
    # Every replica of one store seals and opens job secrets with the same key file.
    key = os.path.join(tempfile.mkdtemp(prefix="corral-key-"), "corrald.key")
    config += f"security: {{keyFile: {key}}}\n"
    first = Replica("r0", store, config)  # bootstraps the store's tokens
    rest = [Replica(f"r{i}", store, config) for i in range(1, count)]
    return [first] + rest


def bench_submit():
    print("submit: durable submissions/s, 12 clients in all, PostgreSQL fsync on")
    rows = []
    for count in (1, 2, 3):
        runs = []
        for run in range(3):
            store = fresh_database(f"corral_submit_{count}_{run}")
            replicas = start_replicas(count, store, UNLIMITED)
            token = token_of(replicas)
            time.sleep(1.0)
            clients = [12 // count + (1 if i < 12 % count else 0) for i in range(count)]
            procs = [subprocess.Popen([SUBMIT_LOAD, "--server", r.addr, "--token", token,
                                       "--clients", str(c), "--seconds", "10",
                                       "--key-prefix", f"{r.name}-{run}-"],
                                      stdout=subprocess.PIPE, text=True)
                     for r, c in zip(replicas, clients)]
            outs = [json.loads(p.communicate()[0].strip().splitlines()[-1]) for p in procs]
            total = sum(o["per_second"] for o in outs)
            p99 = max(o["p99_ms"] for o in outs)
            runs.append((total, p99))
            errors = sum(o["errors"] + o["rejected"] for o in outs)
            print(f"  replicas={count} run={run}: {total:.0f}/s (per replica "
                  f"{', '.join(str(round(o['per_second'])) for o in outs)}), worst p99 {p99:.1f} ms, "
                  f"{errors} errors or rejections", flush=True)
            for r in replicas:
                r.stop()
        rows.append((count, statistics.median(t for t, _ in runs), statistics.median(p for _, p in runs)))
    for count, rate, p99 in rows:
        print(f"SUMMARY submit replicas={count} median_per_second={rate:.0f} median_worst_p99_ms={p99:.1f}")


class Conn:
    """One keep-alive connection to a replica."""

    def __init__(self, addr, token):
        import http.client
        host, port = addr.rsplit(":", 1)
        self.c = http.client.HTTPConnection(host, int(port), timeout=60)
        self.h = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}

    def post(self, path, body):
        self.c.request("POST", path, json.dumps(body), self.h)
        r = self.c.getresponse()
        body = r.read()
        if r.status not in (200, 201):
            print(f"  {path}: {r.status} {body[:200]!r}", flush=True)
        return r.status


def parallel(work, threads=8):
    ts = [threading.Thread(target=work, args=(i, threads)) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def bench_place():
    regions = ["r1", "r2", "r3", "r4"]
    tenants = [f"t{i}" for i in range(8)]
    # 10,000 GPUs in four regions, one shard each, on two replicas. Eight tenants whose
    # guarantee plus borrow limit (1,000 each, 8,000 in all) binds before the fleet's
    # capacity, each asking for 2,000 one-GPU jobs spread over the regions: every tenant
    # reaches its limit while four shards place for it at once.
    config = ("scheduler: {tickMs: 500}\nreplica: {leaseMs: 5000}\nshards:\n" +
              "".join(f"  - {{name: {r}, region: {r}}}\n" for r in regions) + "tenants:\n" +
              "".join(f"  {t}: {{quotas: {{H100: {{guaranteed: 600, borrowLimit: 400}}}}, "
                      f"submitRatePerSecond: 1000000, submitBurst: 1000000, "
                      f"maxPendingJobs: 10000000}}\n" for t in tenants))
    store = fresh_database("corral_place")
    replicas = start_replicas(2, store, config)
    token = token_of(replicas)
    time.sleep(2)
    # The queue first (no node yet: every job waits), then the fleet.
    jobs = [(t, k) for t in tenants for k in range(2000)]

    def submit(i, n):
        conn = Conn(replicas[i % 2].addr, token)
        for t, k in jobs[i::n]:
            conn.post("/v1/jobs", {"name": f"{t}-{k}", "tenant": t,
                                          "resources": {"gpus": 1, "gpuTypes": ["H100"],
                                                        "region": regions[k % 4]},
                                          "command": ["true"]})

    t0 = time.time()
    parallel(submit)
    print(f"place: {len(jobs)} jobs queued in {time.time() - t0:.1f} s", flush=True)
    time.sleep(6)  # a full read of the queue by every shard

    def register(i, n):
        conn = Conn(replicas[i % 2].addr, token)
        for k in range(i, 1250, n):
            conn.post("/v1/nodes", {"id": f"n{k:04d}", "gpuType": "H100", "gpuCount": 8,
                                           "labels": {"region": regions[k % 4], "spine": f"s{k // 160}",
                                                      "leaf": f"l{k // 20}"}})

    before = sum(metric(r.addr, token, "corral_sched_placements_total") for r in replicas)
    start = time.time()
    parallel(register)
    registered = time.time() - start
    placed = lambda: sum(metric(r.addr, token, "corral_sched_placements_total") for r in replicas) - before
    target = 8000  # every tenant at its limit
    while placed() < target and time.time() - start < 300:
        time.sleep(0.1)
    elapsed = time.time() - start
    n = placed()
    time.sleep(3)  # more cycles: a placement past the tenants' limits would show now
    settled = placed()
    conflicts = sum(metric(r.addr, token, "corral_sched_quota_conflicts_total") for r in replicas)
    cycles = sum(metric(r.addr, token, "corral_sched_cycles_total") for r in replicas)
    errors = sum(metric(r.addr, token, "corral_sched_errors_total") for r in replicas)
    print(f"place: 1,250 nodes registered in {registered:.1f} s; {n:.0f} placements "
          f"{elapsed:.1f} s after the first node ({n / elapsed:.0f}/s), {cycles:.0f} cycles, "
          f"{conflicts:.0f} placements dropped at commit by the quota recount "
          f"({conflicts / max(n, 1) * 100:.2f}% of placements), {errors:.0f} failed cycles; "
          f"{settled:.0f} placed 3 s later (the tenants' limits add up to {target})")
    print(f"SUMMARY place shards=4 replicas=2 placements={n:.0f} per_second={n / elapsed:.0f} "
          f"conflicts={conflicts:.0f} conflict_rate={conflicts / max(n, 1):.4f} "
          f"over_quota={max(0, settled - target):.0f}")
    for r in replicas:
        r.stop()


def bench_takeover():
    config = ("replica: {leaseMs: 2000}\nshards:\n  - {name: h100, gpuTypes: [H100]}\n"
              "  - {name: a100, gpuTypes: [A100-80GB]}\n")
    store = fresh_database("corral_takeover")
    replicas = start_replicas(3, store, config)
    token = token_of(replicas)
    by_name = {r.name: r for r in replicas}

    def shards(via):
        return {s["name"]: s for s in call(via.addr, token, "GET", "/v1/shards")["shards"]}

    times = []
    for kill in range(5):
        time.sleep(4)  # spread out again after the last restart
        holder = shards(replicas[0])["h100"]["holder"]
        victim = by_name[holder]
        survivor = next(r for r in replicas if r is not victim)
        t0 = time.time()
        victim.kill9()
        while True:
            s = shards(survivor)["h100"]
            if s["live"] and s["holder"] != holder:
                break
            time.sleep(0.02)
        took = time.time() - t0
        times.append(took)
        print(f"  kill {kill}: {holder} killed, h100 taken by {s['holder']} after {took * 1000:.0f} ms",
              flush=True)
        victim.start()
    print(f"SUMMARY takeover leaseMs=2000 kills={len(times)} median_ms={statistics.median(times) * 1000:.0f} "
          f"max_ms={max(times) * 1000:.0f}")
    for r in replicas:
        r.stop()


if __name__ == "__main__":
    if not PG:
        sys.exit("replicas.py: run it under scripts/with_postgres.sh (CORRAL_TEST_POSTGRES_URL)")
    if WHAT in ("all", "takeover"):
        bench_takeover()
    if WHAT in ("all", "submit"):
        bench_submit()
    if WHAT in ("all", "place"):
        bench_place()
