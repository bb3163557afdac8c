#!/usr/bin/env python3
"""fleet_load: jobs at a steady arrival rate, then a burst, against a running corrald whose
nodes are emulated (corral-agent --emulate N), and what the control plane made of them.

  fleet_load.py --server 127.0.0.1:8470 --token TOKEN --rate 100 --seconds 600 --burst 5000

Each job's workers run for EMULATE_SECONDS (drawn per job, exponential around
--runtime-mean, so the fleet fills and drains as a real one does). The mix follows the
shape of public traces: most jobs ask for one GPU, a few for a node, a few are gangs of 64
to 512 GPUs (docs/performance.md#10000-gpus-end-to-end). Standard library only.

Prints one JSON object: submissions (acknowledged, refused), submit -> running latency
percentiles per size class (from each job's own events: `submitted` to the first
`started`, so the client's clock plays no part), placements per second, and the
scheduling cycle's phases from /metrics (corral_sched_cycle_phase_seconds).
"""
import argparse
import http.client
import json
import random
import threading
import time


def percentile(values, p):
    if not values:
        return None
    v = sorted(values)
    return v[min(len(v) - 1, int(p * (len(v) - 1) + 0.5))]


class Api:
    """One keep-alive connection; one per thread."""

    def __init__(self, server, token):
        self.server, self.token, self.conn = server, token, None

    def call(self, method, path, body=None):
        for attempt in range(3):
            try:
                if self.conn is None:
                    host, port = self.server.rsplit(":", 1)
                    self.conn = http.client.HTTPConnection(host, int(port), timeout=60)
                headers = {"Authorization": "Bearer " + self.token}
                data = None
                if body is not None:
                    data = json.dumps(body).encode()
                    headers["Content-Type"] = "application/json"
                self.conn.request(method, path, body=data, headers=headers)
                r = self.conn.getresponse()
                return r.status, r.read()
            except (OSError, http.client.HTTPException):
                self.conn = None
                if attempt == 2:
                    raise
        return 0, b""


def job_shape(rng):
    """(gpus, gpusPerNode or None): 84% one GPU (as in Philly, Helios and Alibaba's traces),
    10% two or four, 5.5% a whole node, 0.5% gangs of 64 to 512: 2.6 GPUs a job on average."""
    x = rng.random()
    if x < 0.84:
        return 1, None
    if x < 0.94:
        return rng.choice([2, 4]), None
    if x < 0.995:
        return 8, 8
    return rng.choice([64, 64, 128, 256, 512]), 8


def spec(rng, index, runtime_mean, tenants):
    gpus, per_node = job_shape(rng)
    seconds = max(5, min(20 * runtime_mean, int(rng.expovariate(1.0 / runtime_mean))))
    resources = {"gpus": gpus}
    if per_node:
        resources["gpusPerNode"] = per_node
    return {
        "name": "load-%d" % index,
        "tenant": tenants[index % len(tenants)],
        "resources": resources,
        "env": {"EMULATE_SECONDS": str(seconds)},
        "command": ["python3", "train.py"],
    }


def scrape(api):
    status, body = api.call("GET", "/metrics")
    out = {}
    if status != 200:
        return out
    for line in body.decode().splitlines():
        if line.startswith("#") or " " not in line:
            continue
        name, value = line.rsplit(" ", 1)
        try:
            out[name] = float(value)
        except ValueError:
            pass
    return out


def phase_percentiles(before, after, phase):
    """p50 and p99 (bucket upper bounds, seconds) of one cycle phase between two scrapes."""
    prefix = 'corral_sched_cycle_phase_seconds_bucket{phase="%s",le="' % phase
    buckets = []
    for name, value in after.items():
        if name.startswith(prefix):
            le = name[len(prefix):-2]
            bound = float("inf") if le == "+Inf" else float(le)
            buckets.append((bound, value - before.get(name, 0.0)))
    buckets.sort()
    total = buckets[-1][1] if buckets else 0
    result = {"cycles": int(total)}
    for label, p in (("p50_ms", 0.5), ("p99_ms", 0.99)):
        result[label] = None
        for bound, count in buckets:
            if total and count >= p * total:
                result[label] = None if bound == float("inf") else round(bound * 1000, 1)
                break
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--server", required=True, help="HOST:PORT of corrald")
    ap.add_argument("--token", required=True)
    ap.add_argument("--rate", type=float, default=100, help="job arrivals per second")
    ap.add_argument("--seconds", type=float, default=60, help="how long to keep the rate")
    ap.add_argument("--burst", type=int, default=0, help="jobs submitted at once afterwards")
    ap.add_argument("--runtime-mean", type=float, default=60, help="mean job runtime, seconds")
    ap.add_argument("--tenants", default="default", help="comma-separated tenants")
    ap.add_argument("--threads", type=int, default=32)
    ap.add_argument("--settle", type=float, default=10,
                    help="seconds to wait after the last submission before reading")
    ap.add_argument("--sample", type=int, default=2000,
                    help="jobs whose events are read for the latency (all gangs, plus a "
                         "random sample of the rest)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    rng = random.Random(args.seed)
    tenants = args.tenants.split(",")
    steady = int(args.rate * args.seconds)
    specs = [spec(rng, i, args.runtime_mean, tenants) for i in range(steady + args.burst)]
    lock = threading.Lock()
    next_index = [0]
    submitted = {}  # index -> job id
    refused = {"429": 0, "other": 0}
    before = scrape(Api(args.server, args.token))
    start = time.monotonic()

    def worker():
        api = Api(args.server, args.token)
        while True:
            with lock:
                i = next_index[0]
                next_index[0] += 1
            if i >= len(specs):
                return
            if i < steady:  # the steady phase keeps its schedule; the burst does not wait
                delay = start + i / args.rate - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
            status, body = api.call("POST", "/v1/jobs", specs[i])
            with lock:
                if status == 201:
                    submitted[i] = json.loads(body)["id"]
                else:
                    refused["429" if status == 429 else "other"] += 1

    threads = [threading.Thread(target=worker) for _ in range(args.threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    submit_seconds = time.monotonic() - start
    time.sleep(args.settle)
    api = Api(args.server, args.token)
    after = scrape(api)
    elapsed = time.monotonic() - start

    # Latency from the jobs' own events.
    gangs = [i for i in submitted if specs[i]["resources"]["gpus"] >= 64]
    rest = [i for i in submitted if specs[i]["resources"]["gpus"] < 64]
    sample_rng = random.Random(args.seed + 1)
    chosen = gangs + sample_rng.sample(rest, min(len(rest), max(0, args.sample - len(gangs))))
    classes = [p + c for p in ("steady ", "burst ") for c in ("1", "2-8", "64+")]
    waits = {c: [] for c in classes}
    never = {c: 0 for c in classes}
    # Each wait split at the job's `placed` event: the scheduler's part (queue, cycle)
    # and the agents' part (assignment poll, start, the heartbeat that reports it).
    split = {c: ([], []) for c in classes}
    for i in chosen:
        gpus = specs[i]["resources"]["gpus"]
        cls = ("steady " if i < steady else "burst ") + (
            "1" if gpus == 1 else ("64+" if gpus >= 64 else "2-8"))
        status, body = api.call("GET", "/v1/jobs/%d/events" % submitted[i])
        events = json.loads(body).get("events", []) if status == 200 else []
        sub = next((e["timeMs"] for e in events if e["kind"] == "submitted"), None)
        run = next((e["timeMs"] for e in events if e["kind"] == "started"), None)
        if sub is None or run is None:
            never[cls] += 1
            continue
        waits[cls].append(run - sub)
        placed = next((e["timeMs"] for e in events if e["kind"] == "placed"), None)
        if placed is not None:
            split[cls][0].append(placed - sub)
            split[cls][1].append(run - placed)

    def delta(name):
        return after.get(name, 0.0) - before.get(name, 0.0)

    out = {
        "submitted": len(submitted),
        "refused": refused,
        "submit_seconds": round(submit_seconds, 1),
        "arrivals_per_second": round(len(submitted) / submit_seconds, 1),
        "latency_ms": {
            cls: {"sampled": len(v) + never[cls], "not_started": never[cls],
                  "p50": percentile(v, 0.5), "p99": percentile(v, 0.99), "max": max(v) if v else None,
                  "to_placed_p50": percentile(split[cls][0], 0.5),
                  "to_placed_p99": percentile(split[cls][0], 0.99),
                  "placed_to_started_p50": percentile(split[cls][1], 0.5),
                  "placed_to_started_p99": percentile(split[cls][1], 0.99)}
            for cls, v in waits.items()
        },
        "placements_per_second": round(delta("corral_sched_placements_total") / elapsed, 1),
        "cycles": int(delta("corral_sched_cycles_total")),
        "cycle_mean_ms": round(1000 * delta("corral_sched_cycle_seconds_total") /
                               max(1, delta("corral_sched_cycles_total")), 1),
        "cycle_phases": {p: phase_percentiles(before, after, p)
                         for p in ("read", "build", "decide", "apply")},
        "running_jobs": after.get("corral_running_jobs"),
        "pending_jobs": after.get("corral_pending_jobs"),
        "polls_waiting": after.get("corral_agent_polls_waiting"),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
