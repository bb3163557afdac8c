#!/usr/bin/env python3
"""End-to-end load against a running local Corral cluster (corrald + agents).

Mirrors ../shared/peers/slurm/bench.sh so the two can be read side by side:
  burst  N one-GPU jobs running /bin/true, submitted back to back by one client with
         the `corral` CLI (one process per submission, like sbatch); end-to-end rate =
         N / (first submit -> N-th job finished), completions counted from /metrics
         every 0.1 s (like Slurm's sdiag polling).
  par    the same from PAR concurrent clients.
  api    the same N jobs from one client over one keep-alive HTTP connection (a pipeline
         or workflow engine calling the API, rather than a shell spawning a CLI per job).
  idle   LAT_K one-GPU jobs one at a time on an idle cluster with a random 0.2-1.2 s
         gap; latency = client clock just before submitting -> the clock at the top of
         the worker (it writes `date +%s%N`). Same host clock, ms resolution.
  gang   10 x a 16-GPU job on two nodes (gpusPerNode 8); latency = submit -> the later
         of its ranks starts.
Prints one `SUMMARY key=value ...` line.
"""
import argparse, json, os, random, statistics, subprocess, sys, tempfile, threading, time
import urllib.request


def pct(values, p):
    if not values:
        return float("nan")
    s = sorted(values)
    k = (len(s) - 1) * p / 100.0
    lo = int(k)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


class Cluster:
    def __init__(self, server, token, corral):
        self.server, self.token, self.corral = server, token, corral

    def metric(self, name):
        # /metrics needs a token of role metrics or admin (docs/metrics.md).
        req = urllib.request.Request(self.server + "/metrics",
                                     headers={"Authorization": "Bearer " + self.token})
        with urllib.request.urlopen(req, timeout=10) as r:
            for line in r.read().decode().splitlines():
                if line.startswith(name + " ") or line.startswith(name + "{"):
                    return float(line.rsplit(" ", 1)[1])
        raise KeyError(name)

    def submit_cli(self, spec):
        subprocess.run([self.corral, "submit", "--server", self.server, "--token", self.token,
                        "-f", "-", "-o", "json"], input=spec.encode(),
                       check=True, stdout=subprocess.DEVNULL)

    def job(self, jid):
        req = urllib.request.Request(f"{self.server}/v1/jobs/{jid}",
                                     headers={"Authorization": "Bearer " + self.token})
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read())

    def submit_http(self, spec):
        req = urllib.request.Request(self.server + "/v1/jobs", data=spec.encode(), method="POST",
                                     headers={"Authorization": "Bearer " + self.token,
                                              "Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as r:
            return json.loads(r.read())["id"]


def trivial(name):
    return json.dumps({"name": name, "resources": {"gpus": 1}, "command": ["/bin/true"]})


class ApiSubmitter:
    """POST /v1/jobs over one keep-alive connection."""

    def __init__(self, server, token):
        import http.client, urllib.parse
        u = urllib.parse.urlparse(server)
        self.conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
        self.headers = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}

    def __call__(self, spec):
        self.conn.request("POST", "/v1/jobs", body=spec, headers=self.headers)
        r = self.conn.getresponse()
        body = r.read()
        if r.status != 201:
            raise SystemExit(f"submit: HTTP {r.status} {body[:200]!r}")


def throughput(c, n, clients, label, timeout_s, api=False):
    done0 = c.metric("corral_jobs_succeeded_total")
    t0 = time.time()
    per = [n // clients + (1 if i < n % clients else 0) for i in range(clients)]

    def run(k, i):
        submit = ApiSubmitter(c.server, c.token) if api else c.submit_cli
        for j in range(k):
            submit(trivial(f"{label}-{i}-{j}"))

    threads = [threading.Thread(target=run, args=(k, i)) for i, k in enumerate(per)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    t_sub = time.time()
    deadline = t0 + timeout_s
    while c.metric("corral_jobs_succeeded_total") - done0 < n:
        if time.time() > deadline:
            raise SystemExit(f"{label}: only {c.metric('corral_jobs_succeeded_total') - done0:.0f}"
                             f" of {n} finished within {timeout_s} s")
        time.sleep(0.1)
    t_end = time.time()
    return n / (t_sub - t0), n / (t_end - t0)


def stamped(name, gpus, stamp_dir):
    spec = {"name": name, "resources": {"gpus": gpus},
            "command": ["/bin/sh", "-c", f'date +%s%N > {stamp_dir}/$CORRAL_JOB_ID.$RANK']}
    if gpus > 8:
        spec["resources"]["gpusPerNode"] = 8
    return json.dumps(spec)


def wait_stamps(stamp_dir, jid, ranks, timeout_s=20):
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        got = []
        for r in range(ranks):
            p = os.path.join(stamp_dir, f"{jid}.{r}")
            try:
                with open(p) as f:
                    got.append(int(f.read().strip()) / 1e9)
            except (FileNotFoundError, ValueError):
                break
        if len(got) == ranks:
            return max(got)
        time.sleep(0.005)
    raise SystemExit(f"job {jid}: {ranks} ranks did not all start within {timeout_s} s")


def wait_finished(c, jid, timeout_s=30):
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        if c.job(jid)["phase"] in ("succeeded", "failed", "cancelled"):
            return
        time.sleep(0.02)
    raise SystemExit(f"job {jid} did not finish")


def latency(c, k, gpus, label, gap):
    stamp_dir = tempfile.mkdtemp(prefix="corral-e2e-")
    out = []
    for i in range(k):
        if gap:
            time.sleep(random.uniform(0.2, 1.2))
        t0 = time.time()
        jid = c.submit_http(stamped(f"{label}-{i}", gpus, stamp_dir))
        out.append((wait_stamps(stamp_dir, jid, gpus) - t0) * 1000)
        wait_finished(c, jid)
        print(f"{label} job {jid}: {out[-1]:.1f} ms", file=sys.stderr)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--token-file", required=True)
    ap.add_argument("--corral", required=True)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--par", type=int, default=4)
    ap.add_argument("--lat-k", type=int, default=50)
    ap.add_argument("--gang-k", type=int, default=10)
    ap.add_argument("--only", default="burst api idle gang")
    ap.add_argument("--timeout", type=int, default=170)
    a = ap.parse_args()
    c = Cluster(a.server, open(a.token_file).read().strip(), a.corral)
    only = a.only.split()
    res = {}
    if "burst" in only:
        res["submit_serial_per_s"], res["e2e_serial_per_s"] = throughput(c, a.n, 1, "burst", a.timeout)
    if "par" in only:
        res[f"submit_par{a.par}_per_s"], res[f"e2e_par{a.par}_per_s"] = throughput(
            c, a.n, a.par, "par", a.timeout)
    if "api" in only:
        res["submit_api_per_s"], res["e2e_api_per_s"] = throughput(c, a.n, 1, "api", a.timeout,
                                                                   api=True)
    if "idle" in only:
        lat = latency(c, a.lat_k, 1, "idle", True)
        res["idle_lat_p50_ms"], res["idle_lat_p99_ms"] = pct(lat, 50), pct(lat, 99)
    if "gang" in only:
        lat = latency(c, a.gang_k, 16, "gang", True)
        res["gang16_start_p50_ms"], res["gang16_start_p99_ms"] = pct(lat, 50), pct(lat, 99)
    print("SUMMARY corral " + " ".join(f"{k}={v:.1f}" for k, v in res.items()))


if __name__ == "__main__":
    main()
