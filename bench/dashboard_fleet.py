#!/usr/bin/python3
"""How long the dashboard's fleet view takes to draw 10,000 GPUs, in headless Chromium.

    bench/dashboard_fleet.py BUILD_DIR [--nodes 1250] [--runs 7]

Starts corrald (BUILD_DIR/src/server/corrald, SQLite in a temporary dir), registers
--nodes nodes of 8 H100s through POST /v1/nodes (64 to a leaf, 16 to a rack), then joins
an agent session for each and sends one heartbeat with readings (varied utilization,
power, temperature; a few throttled and unhealthy GPUs), so the heatmap has real data.
Each run opens the page signed in, goes to #/fleet, and times from the navigation to
the second animation frame after the view drew (the fetch of /v1/fleet, parsing, the
string build, layout and paint). Prints each run, the median, and the median of the
draw alone (string build and innerHTML). The figures go in docs/performance.md.
"""

import argparse
import json
import os
import statistics
import sys
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "dashboard"))
from cdp import Browser  # noqa: E402
from cluster import Cluster  # noqa: E402


def call(url, method, path, body, token):
    req = urllib.request.Request(url + path, data=json.dumps(body).encode(), method=method)
    req.add_header("Authorization", f"Bearer {token}")
    req.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read().decode())


def node_spec(i):
    name = f"node{i:04d}"
    return name, {"id": name,
                  "labels": {"leaf": f"leaf{i // 64:02d}", "rack": f"rack{i // 16:03d}", "spine": "spine1"},
                  "gpus": [{"index": g, "uuid": f"GPU-{name}-{g}", "type": "H100", "nvlinkDomain": 0}
                           for g in range(8)]}


def readings(i):
    out = []
    for g in range(8):
        k = (i * 8 + g) * 2654435761 % 1000  # a fixed spread of values
        out.append({"index": g, "present": True, "xidErrors": [131] if k == 7 else [],
                    "eccUncorrectable": 0, "temperatureC": 35 + k % 50, "powerW": 80 + k % 600,
                    "powerLimitW": 700, "smPercent": k % 101, "memoryUsedMib": k * 80,
                    "throttle": ["hw_thermal"] if k % 97 == 0 else []})
    return out


def populate(cluster, nodes):
    join = open(os.path.join(cluster.data_dir, "join.token")).read().strip()
    start = time.monotonic()
    for i in range(nodes):
        name, spec = node_spec(i)
        call(cluster.url, "POST", "/v1/nodes", spec, cluster.admin_token)
        session = call(cluster.url, "POST", "/v1/agents/join",
                       {"agentUrl": "http://127.0.0.1:1", "node": spec,
                        "inventory": {"source": "simulated:bench"}}, join)
        call(cluster.url, "POST", f"/v1/agents/{name}/heartbeat",
             {"epoch": session["epoch"], "agentUrl": "http://127.0.0.1:1", "gpus": readings(i),
              "workers": []}, session["token"])
    print(f"registered {nodes} nodes ({nodes * 8} GPUs) with readings in {time.monotonic() - start:.1f} s")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--nodes", type=int, default=1250)
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    with Cluster(os.path.join(args.build, "src"), os.path.join(args.build, "examples/trainer"),
                 os.path.join(root, "examples/config/local.yaml"), agents=[]) as cluster:
        populate(cluster, args.nodes)
        size = len(urllib.request.urlopen(urllib.request.Request(
            cluster.url + "/v1/fleet", headers={"Authorization": f"Bearer {cluster.admin_token}"})).read())
        print(f"GET /v1/fleet: {size / 1048576:.1f} MiB")
        with Browser.launch(width=1600, height=1000) as browser:
            page = browser.page
            page.navigate(cluster.url + "/#token=" + cluster.admin_token)
            page.wait_for("document.querySelector('#who').innerText === 'admin'")
            totals, draws = [], []
            for run in range(args.runs):
                page.evaluate("location.hash = '#/queue'")
                page.wait_for("document.body.dataset.view === '/queue'", 30)
                ms = page.evaluate(f"""new Promise((done) => {{
                    const t0 = performance.now();
                    const frame = () => new Promise((r) => requestAnimationFrame(() => r()));
                    const check = async () => {{
                      if (document.body.dataset.view === '/fleet' &&
                          document.querySelectorAll('#heatmap .g').length === {args.nodes * 8}) {{
                        await frame(); await frame();
                        done(performance.now() - t0);
                      }} else setTimeout(check, 5);
                    }};
                    location.hash = '#/fleet';
                    check();
                }})""")
                draw = float(page.evaluate("document.body.dataset.fleetRenderMs"))
                totals.append(ms)
                draws.append(draw)
                print(f"run {run + 1}: {ms:.0f} ms to a painted fleet view ({draw:.0f} ms drawing)")
            assert not page.console_errors(), page.console_errors()
    print(f"median of {args.runs}: {statistics.median(totals):.0f} ms in all, "
          f"{statistics.median(draws):.0f} ms drawing ({args.nodes} nodes, {args.nodes * 8} GPUs)")


if __name__ == "__main__":
    main()
