#!/usr/bin/env python3
"""Aggregates bench/scoreboard.sh's runs into one table of ratios (markdown).

Usage: scoreboard.py OUT WALL_SECONDS [--flags=TEXT] [--docs docs/evaluation.md]

Per world and trace, each policy's metrics are averaged over the trace's workloads (the
Pollux and Sia sets have several; the others one). Corral's default is set against the best
of FIFO, Slurm and Tiresias on each metric; a cell that misses the issue's target is marked
with a cross. Where Corral also ran with every job elastic, a second table sets that
against rigid Corral. With --docs the tables replace the text between the scoreboard
markers.
"""
import glob
import json
import os
import sys
from collections import defaultdict

BASELINES = ("fifo", "slurm", "tiresias")


def load(out):
    groups = defaultdict(list)  # (world, trace) -> [policies dict]
    for path in sorted(glob.glob(os.path.join(out, "*", "*", "*", "summary.json"))):
        world, trace = path.split(os.sep)[-4:-2]
        groups[(world, trace)].append(json.load(open(path))["policies"])
    return groups


def aggregate(runs, policy):
    ps = [r[policy] for r in runs]
    mean = lambda k: sum(p[k] for p in ps) / len(ps)
    si = [t["sharing_incentive"] for p in ps for t in p["tenants"] if "sharing_incentive" in t]
    return {
        "jobs": sum(p["jobs"] for p in ps),
        "jct": mean("mean_jct_s"),
        "queue": mean("mean_queue_s"),
        "alloc": mean("gpu_allocation"),
        "jain": mean("jain_index"),
        "idle": mean("idle_waiting_share"),
        "si": min(si) if si else None,
        "lost": sum(p["lost_gpu_hours"] for p in ps),
    }


def hours(s):
    return f"{s / 3600:.2f} h" if s < 100 * 3600 else f"{s / 86400:.1f} d"


def table(groups):
    rows, met, total = [], 0, 0
    order = lambda k: (k[0] != "as-is", k[1])
    for world, trace in sorted(groups, key=order):
        runs = groups[(world, trace)]
        m = {p: aggregate(runs, p) for p in BASELINES + ("corral",)}
        c = m["corral"]
        best = min(BASELINES, key=lambda p: m[p]["jct"])
        checks = []

        def check(ok, text):
            nonlocal met, total
            total += 1
            met += ok
            return text + ("" if ok else " ✗")

        jct_ratio = c["jct"] / m[best]["jct"]
        jain_best = max(m[p]["jain"] for p in BASELINES)
        cells = [
            world,
            f"{trace} ({len(runs)})" if len(runs) > 1 else trace,
            f"{c['jobs']:,}",
            hours(c["jct"]),
            f"{best} {hours(m[best]['jct'])}",
            check(jct_ratio <= 1.05, f"{jct_ratio:.2f}"),
            f"{c['jct'] / m['tiresias']['jct']:.2f}",
            check(c["idle"] <= 0.01, f"{100 * c['idle']:.2f}%"),
            check(c["jain"] >= jain_best - 0.02, f"{c['jain']:.3f} / {jain_best:.3f}"),
            check(c["si"] is None or c["si"] >= 0.95, "" if c["si"] is None else f"{c['si']:.2f}"),
        ]
        if trace.startswith("philly-"):
            cells.append(check(c["alloc"] >= m["fifo"]["alloc"],
                               f"{c['alloc']:.3f} / {m['fifo']['alloc']:.3f}"))
            cells.append(check(c["queue"] <= 1.5 * m["tiresias"]["queue"],
                               f"{c['queue'] / m['tiresias']['queue']:.2f}"))
        else:
            cells += ["", ""]
        cells.append(f"{c['lost']:,.0f}")
        rows.append("| " + " | ".join(cells) + " |")
    head = ("| world | trace (workloads) | jobs | Corral mean JCT | best baseline | ratio (≤ 1.05) "
            "| vs Tiresias | idle while waiting (≤ 1%) | Jain: Corral / best baseline "
            "| min sharing incentive (≥ 0.95) | Philly: allocation / FIFO's "
            "| Philly: queue vs Tiresias (≤ 1.5) | Corral lost GPU-h |\n"
            "| --- | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    return head + "\n" + "\n".join(rows), met, total


def elastic_table(groups):
    """Corral with every job elastic against rigid Corral, where the workloads can run
    elastic: never worse is the target."""
    rows, met, total = [], 0, 0
    for world, trace in sorted(groups, key=lambda k: (k[0] != "as-is", k[1])):
        runs = groups[(world, trace)]
        if "corral-elastic" not in runs[0]:
            continue
        rigid, ps = aggregate(runs, "corral"), [r["corral-elastic"] for r in runs]
        elastic = sum(p["mean_jct_s"] for p in ps) / len(ps)
        ratio = elastic / rigid["jct"]
        total += 1
        met += ratio <= 1.0
        rows.append(f"| {world} | {trace} ({len(runs)}) | {hours(rigid['jct'])} | {hours(elastic)} "
                    f"| {ratio:.2f}{'' if ratio <= 1.0 else ' ✗'} "
                    f"| {sum(p['resizes'] for p in ps):,} "
                    f"| {sum(p['resize_restart_gpu_hours'] for p in ps):,.1f} |")
    head = ("| world | trace (workloads) | Corral rigid mean JCT | Corral elastic mean JCT "
            "| elastic / rigid (≤ 1) | resizes | GPU-h restarting for resizes |\n"
            "| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    return head + "\n" + "\n".join(rows), met, total


def main():
    out, wall = sys.argv[1], int(sys.argv[2])
    flags = next((a.split("=", 1)[1] for a in sys.argv[3:] if a.startswith("--flags=")), "")
    docs = sys.argv[sys.argv.index("--docs") + 1] if "--docs" in sys.argv else None
    groups = load(out)
    text, met, total = table(groups)
    elastic, elastic_met, elastic_total = elastic_table(groups)
    if elastic_total:
        text += "\n\nElastic jobs, where the workloads can run elastic:\n\n" + elastic
    met, total = met + elastic_met, total + elastic_total
    text += (f"\n\nTargets met: {met} of {total} (✗ marks a miss). Wall time: "
             f"{wall // 60} min {wall % 60} s on this machine"
             + (f"; Corral's knobs: `{flags}`" if flags else "") + ".\n")
    if docs is None:
        print(text)
        return
    body = open(docs).read()
    begin, end = "<!-- scoreboard:begin -->", "<!-- scoreboard:end -->"
    if begin not in body or end not in body:
        sys.exit(f"scoreboard.py: {docs} has no {begin} ... {end} section")
    head, rest = body.split(begin, 1)
    _, tail = rest.split(end, 1)
    open(docs, "w").write(head + begin + "\n" + text + end + tail)


if __name__ == "__main__":
    main()
