#!/usr/bin/python3
"""A self-test of cluster.py and cdp.py: a real cluster, a running job, a browser.

    tests/dashboard/smoke_harness.py BUILD_DIR

BUILD_DIR is a release build (build/release): its src/ has corrald and corral-agent,
its examples/trainer/ corral-trainer.
"""

import os
import subprocess
import sys
import time

from cdp import Browser
from cluster import Cluster

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")

# What the cluster and the browser start (ps's comm would cut the longer names).
STRAYS = ["corrald", "corral-agent", "corral-supervise", "corral-trainer", "chromium",
          "chrome_crashpad_handler"]


def stray_processes():
    """Live (not zombie) processes that STRAYS name, as (pid, program) pairs."""
    out = subprocess.run(["ps", "-eo", "pid=,stat=,args="], capture_output=True,
                         text=True, check=True).stdout
    found = set()
    for line in out.splitlines():
        pid, stat, program = line.split(maxsplit=3)[:3]
        if os.path.basename(program) in STRAYS and not stat.startswith("Z"):
            found.add((pid, program))
    return found


def main():
    build = sys.argv[1]
    before = stray_processes()
    start = time.monotonic()

    def lap(what):
        print(f"{time.monotonic() - start:6.2f} s  {what}")

    with Cluster(os.path.join(build, "src"), os.path.join(build, "examples/trainer"),
                 os.path.join(ROOT, "examples/config/local.yaml")) as cluster:
        lap(f"cluster up at {cluster.url}")
        job = cluster.submit(os.path.join(ROOT, "examples/local/finetune-1gpu.yaml"))
        cluster.wait_until(
            lambda: cluster.api("GET", f"/v1/jobs/{job['id']}")[1]["phase"] == "running",
            what=f"job {job['id']} running")
        lap(f"job {job['id']} running")
        with Browser.launch() as browser:
            lap("browser up")
            page = browser.page
            page.navigate(cluster.url + "/healthz")
            text = page.evaluate("document.body.innerText")
            assert '"status":"ok"' in text, text
            lap(f"/healthz says {text}")
            page.screenshot("/tmp/corral-smoke-healthz.png")
            page.press("Tab")
            page.press("Shift+Tab")
            assert page.console_errors() == [], page.console_errors()
            lap("screenshot in /tmp/corral-smoke-healthz.png, Tab pressed")
    lap("stopped")
    # Chromium's helpers and the workers' supervisors may take a moment to exit.
    try:
        Cluster.wait_until(lambda: not stray_processes() - before, timeout=5)
    except TimeoutError:
        sys.exit(f"stray processes: {sorted(stray_processes() - before)}")
    lap("no stray processes")


if __name__ == "__main__":
    main()
