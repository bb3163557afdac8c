#!/usr/bin/python3
"""The dashboard in Debian's headless Chromium against a real corrald with real agents.

    tests/dashboard/dashboard_test.py BUILD_DIR [SCREENSHOT_DIR]

BUILD_DIR is a build whose src/ holds corrald and corral-agent and whose
examples/trainer/ holds corral-trainer. It starts a local cluster (4 simulated DGX
H100 nodes under 2 leaf switches, examples/config/local.yaml), runs jobs of four
tenants, and checks through the page:

  - each view draws the cluster's real data (asserted on the DOM), the fleet view each
    rack's power cap and the watts in use as GET /v1/racks counts them;
  - an admin drains a node from the fleet view: the node drains, and the audit log
    (API and audit view) names the admin who did it, with the reason typed;
  - a member of one tenant sees none of another tenant's jobs, in the page or in the
    data calls the page makes;
  - the page works with the keyboard alone (sign-in, navigation, the heatmap, a cordon
    through the confirmation dialog);
  - no JavaScript errors.

It writes a screenshot of each view to SCREENSHOT_DIR (default: a temporary one);
docs/screenshots/ holds the ones the README shows.
"""

import json
import os
import sys
import tempfile
import time

from cdp import Browser
from cluster import Cluster

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
# rack1 (dgx1) is capped with room for its 8 GPUs at 700 W each, so the cap changes no
# placement the checks count on.
RACK1_CAP_WATTS = 6000


def job(name, tenant, gpus, steps=1_000_000, **extra):
    """A long-running job spec for the sample trainer."""
    spec = {"name": name, "tenant": tenant,
            "resources": {"gpus": gpus, "gpuTypes": ["H100"]},
            "checkpoint": {"dir": f"/tmp/corral-dash-ckpt/{name}", "intervalSeconds": 30},
            "maxRuntime": "15m", "expectedRuntime": "10m",
            "command": ["corral-trainer", "--steps", str(steps), "--step-ms", "50",
                        "--checkpoint-every", "1000"]}
    if gpus >= 8:
        spec["resources"]["gpusPerNode"] = 8
    spec.update(extra)
    return spec


class Check:
    """Counts what was checked, so a run says how much it proved."""

    def __init__(self):
        self.count = 0

    def __call__(self, condition, what):
        if not condition:
            raise AssertionError(what)
        self.count += 1
        print(f"  ok  {what}")


check = Check()


def js(value):
    return json.dumps(value)


def text_of(page, selector):
    return page.evaluate(f"document.querySelector({js(selector)})?.innerText ?? ''")


def go(page, route, ready, timeout=20):
    """Opens #route and waits until the view has drawn and `ready` (JS) holds."""
    page.evaluate(f"location.hash = {js(route)}")
    page.wait_for(f"document.body.dataset.view === {js(route.lstrip('#'))}", timeout)
    return page.wait_for(ready, timeout)


def shoot(page, out, name):
    path = os.path.join(out, f"{name}.png")
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path)
    print(f"  ..  screenshot {path}")


def focused(page):
    """What has the keyboard focus: its tag, id, data-key and text."""
    return page.evaluate("""(() => { const e = document.activeElement;
        return {tag: e.tagName, id: e.id, key: e.dataset.key || '', text: e.innerText || e.value || ''}; })()""")


def tab_to(page, predicate, what, limit=80):
    """Presses Tab until the focused element satisfies predicate (on focused())."""
    for _ in range(limit):
        page.press("Tab")
        f = focused(page)
        if predicate(f):
            return f
    raise AssertionError(f"Tab never reached {what}")


def start_jobs(cluster):
    ids = {}
    for spec in (job("nlp-train", "nlp", 8), job("pretrain", "pretraining", 16, priorityClass="preemptible"),
                 job("vision-small", "vision", 1)):
        ids[spec["name"]] = cluster.submit(spec)["id"]
    for name in list(ids):
        cluster.wait_until(lambda: cluster.api("GET", f"/v1/jobs/{ids[name]}")[1]["phase"] == "running",
                           timeout=30, what=f"{name} running")
    # 32 GPUs cannot fit beside the others: it waits, with the scheduler's reason.
    ids["research-big"] = cluster.submit(job("research-big", "research", 32))["id"]
    cluster.wait_until(lambda: cluster.api("GET", f"/v1/jobs/{ids['research-big']}")[1]["reason"],
                       timeout=30, what="a reason for the pending job")
    # A usage sample (every 5 s) of this state, before the test drains a node.
    cluster.wait_until(lambda: any(s["tenant"] == "*" and s["allocated"] == 25
                                   for s in cluster.api("GET", "/v1/history")[1]["samples"]),
                       timeout=30, what="a usage sample with the 25 GPUs held")
    return ids


def admin_views(page, cluster, ids, operator, out):
    print("admin views")
    go(page, "#/queue", "document.querySelectorAll('#tenants tbody tr').length >= 4")
    tenants = page.evaluate("[...document.querySelectorAll('#tenants tr[data-tenant]')].map(r => r.dataset.tenant)")
    check({"nlp", "vision", "pretraining", "research"} <= set(tenants), f"queue lists every tenant: {sorted(set(tenants))}")
    nlp_alloc = page.evaluate("document.querySelector('#tenants tr[data-tenant=\"nlp\"] [data-field=allocated]').innerText")
    check(nlp_alloc == "8", f"queue shows nlp's 8 allocated GPUs (shows {nlp_alloc})")
    pending = text_of(page, f"#pending tr[data-job=\"{ids['research-big']}\"]")
    check("research-big" in pending and "research" in pending, f"queue lists the pending job: {pending!r}")
    reason = cluster.api("GET", f"/v1/jobs/{ids['research-big']}")[1]["reason"]
    check(reason[:30] in pending, "the pending row says why it waits, as the scheduler does")
    page.wait_for("!document.querySelector('#tenants').innerText.includes('idle') || true")
    shoot(page, out, "queue")

    go(page, "#/jobs", f"document.querySelector('#jobs tr[data-job=\"{ids['research-big']}\"]')")
    rows = page.evaluate("[...document.querySelectorAll('#jobs tbody tr[data-job]')].map(r => +r.dataset.job)")
    check(set(ids.values()) <= set(rows), f"the job list has every job: {rows}")
    check(rows == sorted(rows, reverse=True), "newest first")
    shoot(page, out, "jobs")

    nlp = ids["nlp-train"]
    go(page, f"#/jobs/{nlp}", "document.querySelectorAll('#placement .gpu.mine').length > 0")
    mine = page.evaluate("document.querySelectorAll('#placement .gpu.mine').length")
    check(mine == 8, f"the placement draws the job's 8 GPUs on the topology ({mine})")
    alloc_node = cluster.api("GET", f"/v1/jobs/{nlp}")[1]["allocation"]["gpus"][0]["node"]
    check(page.evaluate(f"!!document.querySelector('#placement .pnode[data-node=\"{alloc_node}\"]')"),
          f"on the node the API names ({alloc_node})")
    check("leaf" in text_of(page, "#placement"), "under its leaf switch")
    timeline = text_of(page, "#timeline")
    check("submitted" in timeline and "placed" in timeline, "the timeline has submitted and placed")
    check('"tenant": "nlp"' in text_of(page, "#spec"), "the spec is shown")
    check("GPU-h" in text_of(page, "#cost"), f"the cost so far: {text_of(page, '#cost')!r}")
    check(page.evaluate("document.querySelectorAll('[data-rank]').length") >= 1, "rank log buttons")
    page.click("[data-rank='0']")
    log = page.wait_for("(t => t && !t.startsWith('Fetching') && t)(document.querySelector('#log').innerText)", 20)
    check(len(log) > 0 and "not found" not in log.lower(), f"rank 0's log comes from its agent ({log[:60]!r})")
    shoot(page, out, "job")

    big = ids["research-big"]
    go(page, f"#/jobs/{big}", "document.querySelector('#why')")
    check(reason[:30] in text_of(page, "#why"), "a pending job's detail explains why it waits")
    shoot(page, out, "job-pending")

    go(page, "#/fleet", "document.querySelectorAll('#heatmap .g').length === 32")
    check(page.evaluate("document.querySelectorAll('#heatmap .node').length") == 4, "the fleet shows 4 nodes")
    check(page.evaluate("document.querySelectorAll('#heatmap .leaf').length") == 2, "grouped under 2 leaf switches")
    check(page.evaluate("document.querySelectorAll('#heatmap .rack').length") == 4, "and 4 racks")
    # Rack power (issue 38, item 6): rack1 is capped in the config; each held GPU counts
    # at the power limit its agent reports (700 W for a simulated H100).
    racks = cluster.api("GET", "/v1/racks")[1]["racks"]
    check([r["name"] for r in racks] == ["rack1", "rack2", "rack3", "rack4"], f"/v1/racks lists the 4 racks: {racks}")
    rack1 = racks[0]
    check(rack1["capWatts"] == RACK1_CAP_WATTS and rack1["usedWatts"] == 700 * rack1["gpusHeld"]
          and rack1["freeWatts"] == RACK1_CAP_WATTS - rack1["usedWatts"] and rack1["gpus"] == 8,
          f"rack1: capped at 6 kW, 700 W per held GPU: {rack1}")
    check(racks[1]["capWatts"] is None and racks[1]["freeWatts"] is None, "rack2 has no cap")
    check("of 6.0 kW" in text_of(page, "#heatmap .rack h4"), f"the heatmap's rack1 shows its cap: {text_of(page, '#heatmap .rack h4')!r}")
    page.click("#racks summary")
    page.wait_for("document.querySelector('#racks').open && document.querySelectorAll('#rack-power tbody tr').length === 4")
    row = text_of(page, "#rack-power tr[data-rack='rack1']")
    check("6.0 kW" in row and "rack1" in row, f"the rack table shows rack1's cap: {row!r}")
    check("none" in text_of(page, "#rack-power tr[data-rack='rack2']"), "and rack2's lack of one")
    page.wait_for("document.querySelectorAll('#heatmap .g.h-ok').length > 0", 20)
    for metric in ("util", "power", "temp", "throttle", "held"):
        page.evaluate(f"(s => {{ s.value = {js(metric)}; s.dispatchEvent(new Event('change', {{bubbles: true}})); }})(document.querySelector('#metric'))")
        page.wait_for(f"document.querySelector('#heatmap').classList.contains('metric-{metric}')")
    held = page.evaluate("document.querySelectorAll('#heatmap .g.held').length")
    check(held == 25, f"colour by allocation: 25 GPUs held ({held})")
    # Shares of a GPU (issue 44): two tenants' shares on one GPU draw it striped, and its
    # row in the node's table names both shares and what is left free.
    shares = []
    for name, tenant, share in (("vision-probe", "vision", 0.25), ("nlp-eval", "nlp", 0.5)):
        spec = job(name, tenant, 1)
        spec["resources"] = {"gpuShare": share, "gpuTypes": ["H100"]}
        ids[name] = cluster.submit(spec)["id"]
        shares.append(ids[name])
    for sid in shares:
        cluster.wait_until(lambda: cluster.api("GET", f"/v1/jobs/{sid}")[1]["phase"] == "running",
                           timeout=30, what=f"share {sid} running")
    placed = [cluster.api("GET", f"/v1/jobs/{sid}")[1]["allocation"] for sid in shares]
    check([a["shareMilli"] for a in placed] == [250, 500], f"each allocation carries its share: {placed}")
    spot = [(a["gpus"][0]["node"], a["gpus"][0]["index"]) for a in placed]
    check(spot[0] == spot[1], f"the second share joins the shared GPU, keeping whole GPUs whole: {spot}")
    page.wait_for("document.querySelectorAll('#heatmap .g.shared').length === 1", 20)
    check(page.evaluate("document.querySelectorAll('#heatmap .g.held').length") == 25, "whole GPUs held stay 25")
    node, gpu = spot[0]
    page.click(f"#heatmap .node[data-node='{node}'] .g[data-gpu='{gpu}']")
    page.wait_for(f"document.querySelector('#node-gpus tr[data-gpu-row=\"{gpu}\"]')?.innerText.includes('free')")
    row = text_of(page, f"#node-gpus tr[data-gpu-row='{gpu}']")
    check(f"job {shares[0]} (vision) 0.25" in row and f"job {shares[1]} (nlp) 0.5" in row and "0.25 free" in row,
          f"the node's table lists both shares and the free quarter: {row!r}")
    shoot(page, out, "fleet-shares")
    for sid in shares:
        cluster.api("POST", f"/v1/jobs/{sid}/cancel", {})
    for sid in shares:
        cluster.wait_until(lambda: cluster.api("GET", f"/v1/jobs/{sid}")[1]["phase"] == "cancelled",
                           timeout=30, what=f"share {sid} cancelled")
    page.wait_for("document.querySelectorAll('#heatmap .g.shared').length === 0", 20)
    page.evaluate("(s => { s.value = 'util'; s.dispatchEvent(new Event('change', {bubbles: true})); })(document.querySelector('#metric'))")
    page.wait_for("document.querySelectorAll('#heatmap .g[class*=\" l\"]').length > 0", 20)
    check(True, "utilization readings colour the cells")
    node_of = {g["node"] for g in cluster.api("GET", f"/v1/jobs/{nlp}")[1]["allocation"]["gpus"]}
    node = sorted(node_of)[0]
    gpu = cluster.api("GET", f"/v1/jobs/{nlp}")[1]["allocation"]["gpus"][0]["index"]
    page.click(f"#heatmap .node[data-node='{node}'] .g[data-gpu='{gpu}']")
    page.wait_for(f"document.querySelector('#detail').innerText.includes('job {nlp}')")
    check(True, f"clicking GPU {gpu} of {node} shows its job {nlp}")
    shoot(page, out, "fleet")

    # An admin drains a node through the page.
    page.click("#heatmap .node[data-node='dgx4'] .g[data-gpu='0']")
    page.wait_for("document.querySelector('#detail h2')?.innerText.includes('dgx4')")
    page.click("[data-action='drain']")
    page.wait_for("document.querySelector('#confirm').open")
    check("dgx4" in text_of(page, "#confirm-title"), "drain asks for a confirmation")
    page.evaluate("document.querySelector('#confirm-reason').focus()")
    page.type("replacing a PSU")
    page.click("#confirm-ok")
    cluster.wait_until(lambda: cluster.api("GET", "/v1/nodes/dgx4")[1]["admin"] == "draining",
                       what="dgx4 draining")
    check(True, "the node is draining after the click")
    page.wait_for("document.querySelector('#heatmap .node[data-node=\"dgx4\"]').classList.contains('admin-draining')")
    check(True, "the heatmap marks it draining")
    entries = cluster.api("GET", "/v1/audit?limit=500")[1]["entries"]
    drains = [e for e in entries if e["action"] == "node.drain" and e["target"] == "node/dgx4"]
    check(len(drains) == 1 and drains[0]["actor"].startswith(operator + "("),
          f"the audit log says who drained it: {drains[-1]['actor'] if drains else None}")
    node_state = cluster.api("GET", "/v1/nodes/dgx4")[1]
    check("replacing a PSU" in json.dumps(node_state), "with the reason typed")

    go(page, "#/audit", "document.querySelector('#audit tbody tr')")
    first = text_of(page, "#audit tbody tr")
    check("node.drain" in first and operator in first, f"the audit view shows the drain first: {first!r}")
    check("verifies" in text_of(page, "#verdict"), "and that the chain verifies")
    shoot(page, out, "audit")

    # The ledger closes 5 s periods a second after they end (local.yaml); the view's
    # default period, the last 30 days to tomorrow, takes them in as they close.
    # An admin cancels the pending job from its page, through the confirmation.
    big = ids["research-big"]
    go(page, f"#/jobs/{big}", "document.querySelector('#cancel')")
    page.click("#cancel")
    page.wait_for("document.querySelector('#confirm').open")
    page.evaluate("document.querySelector('#confirm-reason').focus()")
    page.type("too big for this cluster")
    page.click("#confirm-ok")
    cluster.wait_until(lambda: cluster.api("GET", f"/v1/jobs/{big}")[1]["phase"] == "cancelled",
                       what=f"job {big} cancelled")
    page.wait_for("document.querySelector('h1 .phase-cancelled')")
    check(True, "Cancel on the job's page cancels it, and the page shows it")
    entries = cluster.api("GET", "/v1/audit?limit=500")[1]["entries"]
    cancels = [e for e in entries if e["action"] == "job.cancel" and e["target"] == f"job/{big}"]
    check(len(cancels) == 1 and cancels[0]["actor"].startswith(operator + "("), "audited under the admin who did it")
    check(any("too big for this cluster" in e["message"] for e in cluster.api("GET", f"/v1/jobs/{big}/events")[1]["events"]),
          "with the reason typed")

    go(page, "#/cost", "document.querySelector('#chargeback')")
    page.wait_for("document.querySelectorAll('#chargeback tbody tr th').length >= 2", 30)
    cost_rows = page.evaluate("[...document.querySelectorAll('#chargeback tbody tr th')].map(e => e.innerText)")
    check({"nlp", "pretraining"} <= set(cost_rows), f"the cost view has the ledger by tenant: {cost_rows}")
    page.evaluate("""window.__blobs = []; const make = URL.createObjectURL;
        URL.createObjectURL = (b) => { window.__blobs.push(b); return make(b); };""")
    page.click("#export")
    csv = page.wait_for("window.__blobs.length && window.__blobs[0].text()")
    lines = csv.strip().splitlines()
    check(lines[0].startswith("# currency=USD,from="), f"the CSV export says its currency and window: {lines[0]!r}")
    check(lines[1].startswith("tenant,gpu_hours,used_gpu_hours"), f"and has corral cost's header: {lines[1]!r}")
    check(any(line.startswith("nlp,") for line in lines[2:]), "and a row per tenant")
    check(lines[-1].startswith("TOTAL,"), f"and a TOTAL row: {lines[-1]!r}")
    shoot(page, out, "cost")

    # Usage history: corrald writes a row every 5 s (local.yaml); wait for a few.
    cluster.wait_until(lambda: len({s["atMs"] for s in cluster.api("GET", "/v1/history")[1]["samples"]}) >= 3,
                       timeout=40, what="three usage samples")
    go(page, "#/history", "!!(window.Chart && Chart.getChart(document.querySelector('#chart-alloc')))")
    # The view redraws as rows arrive; a point may average two 5 s rows.
    points = page.wait_for("(n => n >= 3 && n)(Chart.getChart(document.querySelector('#chart-alloc'))?.data.datasets[0].data.length)", 40)
    check(points >= 3, f"the allocation chart has the cluster's samples ({points} points)")
    top = page.evaluate("Math.max(...Chart.getChart(document.querySelector('#chart-alloc')).data.datasets[0].data.map(p => p.y))")
    # 25 GPUs were held before the drain and 9 after; a point may average the two.
    check(top > 9, f"the chart shows the GPUs held before the drain (up to {top})")
    labels = page.evaluate("Chart.getChart(document.querySelector('#chart-tenants')).data.datasets.map(d => d.label)")
    check({"nlp", "pretraining", "vision"} <= set(labels), f"per-tenant allocation: {labels}")
    check(page.evaluate("!!Chart.getChart(document.querySelector('#chart-queue')) && !!Chart.getChart(document.querySelector('#chart-churn'))"),
          "queue and preemption charts")
    shoot(page, out, "history")

    go(page, "#/quotas", "document.querySelector('#quota-table tr[data-tenant=\"nlp\"]') && !!Chart.getChart(document.querySelector('#chart-quota'))")
    nlp_row = text_of(page, "#quota-table tr[data-tenant='nlp']")
    check(nlp_row.split("\t")[1].strip() == "16.0", f"nlp's guarantee over time is 16: {nlp_row!r}")
    sets = page.evaluate("Chart.getChart(document.querySelector('#chart-quota')).data.datasets.map(d => d.label)")
    check(sets == ["guaranteed", "allocated", "borrowed", "fair share"], f"the quota chart: {sets}")
    shoot(page, out, "quotas")


def keyboard(page, cluster):
    print("keyboard")
    page.evaluate("location.hash = '#/queue'")
    page.wait_for("document.body.dataset.view === '/queue'")
    page.evaluate("document.activeElement.blur(); document.body.focus()")
    f = tab_to(page, lambda f: f["tag"] == "A" and f["text"] == "Fleet", "the Fleet link")
    page.press("Enter")
    page.wait_for("document.body.dataset.view === '/fleet'")
    check(True, "Tab and Enter reach the fleet view")
    tab_to(page, lambda f: f["key"].startswith("node-"), "a heatmap node")
    page.press("Home")
    first = focused(page)["key"]
    check(first == "node-dgx1", f"Home goes to the first node ({first})")
    page.press("ArrowRight")
    second = focused(page)["key"]
    check(second.startswith("node-") and second != first, f"ArrowRight moves {first} -> {second}")
    page.press("ArrowLeft")
    check(focused(page)["key"] == first, "ArrowLeft moves back")
    page.press("End")
    last = focused(page)["key"]
    check(last == "node-dgx4", f"End goes to the last node ({last})")
    page.press("ArrowLeft")
    target = focused(page)["key"]
    page.press("Enter")
    node = target.removeprefix("node-")
    page.wait_for(f"document.querySelector('#detail h2')?.innerText.includes({js(node)})")
    check(True, f"Enter shows {node}'s GPUs")
    # The heatmap is one tab stop: the next Tab leaves it for the detail's buttons.
    f = tab_to(page, lambda f: f["key"] == "act-cordon", "the Cordon button", limit=6)
    page.press("Enter")
    page.wait_for("document.querySelector('#confirm').open")
    check(focused(page)["id"] == "confirm-reason", "the dialog takes the focus, on its reason")
    page.press("Escape")
    page.wait_for("!document.querySelector('#confirm').open")
    check(cluster.api("GET", f"/v1/nodes/{node}")[1]["admin"] == "active", "Escape cancels: nothing changed")
    page.evaluate("document.querySelector('[data-key=act-cordon]').focus()")
    page.press("Enter")
    page.wait_for("document.querySelector('#confirm').open")
    page.type("keyboard test")
    page.press("Enter")
    cluster.wait_until(lambda: cluster.api("GET", f"/v1/nodes/{node}")[1]["admin"] == "cordoned",
                       what=f"{node} cordoned")
    check(True, f"typing a reason and Enter cordons {node}")


def member_views(browser_page, cluster, ids, member_token, out):
    print("a member of vision")
    page = browser_page
    page.evaluate("document.querySelector('#signout').click()")
    page.wait_for("!document.querySelector('#login').hidden")
    check(page.evaluate("document.activeElement.id") == "token", "signing out shows the sign-in form, focused")
    page.type(member_token)
    page.press("Enter")
    page.wait_for("document.querySelector('#who').innerText === 'member of vision'")
    check(True, "the form signs in a member of vision")
    check(page.evaluate("document.querySelector('#nav a[href=\"#/audit\"]').hidden"), "the audit view is hidden from a member")

    go(page, "#/queue", "document.querySelector('#tenants tbody tr')")
    tenants = page.evaluate("[...document.querySelectorAll('#tenants tr[data-tenant]')].map(r => r.dataset.tenant)")
    check(set(tenants) == {"vision"}, f"the queue shows vision only: {set(tenants)}")
    body = page.evaluate("document.querySelector('#view').innerText")
    check("research-big" not in body and "nlp-train" not in body, "and no other tenant's jobs")
    shoot(page, out, "queue-member")

    go(page, "#/jobs", "document.querySelector('#jobs tbody tr[data-job]')")
    rows = page.evaluate("[...document.querySelectorAll('#jobs tbody tr[data-job]')].map(r => +r.dataset.job)")
    mine = sorted((ids["vision-small"], ids["vision-probe"]), reverse=True)
    check(rows == mine, f"the job list has vision's jobs only (its share, cancelled, too): {rows}")

    go(page, f"#/jobs/{ids['nlp-train']}", "document.querySelector('#view .error')")
    check("not found" in text_of(page, "#view .error"), "another tenant's job is not found")

    go(page, "#/fleet", "document.querySelectorAll('#heatmap .g').length === 32")
    nlp_gpu = cluster.api("GET", f"/v1/jobs/{ids['nlp-train']}")[1]["allocation"]["gpus"][0]
    page.click(f"#heatmap .node[data-node='{nlp_gpu['node']}'] .g[data-gpu='{nlp_gpu['index']}']")
    page.wait_for(f"document.querySelector('#detail h2')?.innerText.includes({js(nlp_gpu['node'])})")
    detail = text_of(page, "#detail")
    check("another tenant" in detail and f"job {ids['nlp-train']}" not in detail,
          "a GPU of another tenant's job shows as held, nothing more")
    check(page.evaluate("!document.querySelector('[data-action]')"), "a member has no admin buttons")

    # The data calls the page makes, with the member's token.
    calls = page.evaluate("""(async () => {
        const t = sessionStorage.getItem('corral.token');
        const get = async (p) => { const r = await fetch(p, {headers: {Authorization: 'Bearer ' + t}});
          return {status: r.status, text: await r.text()}; };
        return {queue: await get('/v1/queue'), jobs: await get('/v1/jobs'), fleet: await get('/v1/fleet'),
                shares: await get('/v1/shares'), history: await get('/v1/history'),
                historyNlp: await get('/v1/history?tenant=nlp'), cluster: await get('/v1/history?tenant=*'),
                audit: await get('/v1/audit'), chargeback: await get('/v1/chargeback?to=' + new Date(Date.now() + 86400e3).toISOString().slice(0, 10)),
                job: await get('/v1/jobs/""" + str(ids["nlp-train"]) + """')};
    })()""")
    racks = cluster.api("GET", "/v1/racks", token=member_token)
    check(racks[0] == 200 and "job" not in json.dumps(racks[1]), "a member lists the racks, with no job in them")
    for name in ("queue", "jobs", "fleet", "shares", "history", "chargeback"):
        c = calls[name]
        leaked = [t for t in ("nlp", "pretraining", "research") if f'"{t}"' in c["text"]]
        check(c["status"] == 200 and not leaked, f"{name}: 200 and no other tenant in it ({leaked})")
    fleet = json.loads(calls["fleet"]["text"])
    jobs_seen = {g["job"] for n in fleet["nodes"] for g in n["gpus"] if g["job"]}
    check(jobs_seen == {ids["vision-small"]}, f"/v1/fleet names vision's job only: {jobs_seen}")
    history = json.loads(calls["history"]["text"])
    check(history["samples"] and {s["tenant"] for s in history["samples"]} == {"vision"},
          "/v1/history has vision's rows only")
    for name, status in (("historyNlp", 403), ("cluster", 403), ("audit", 403), ("job", 404)):
        check(calls[name]["status"] == status, f"{name}: {calls[name]['status']} (want {status})")

    go(page, "#/history", "!!(window.Chart && Chart.getChart(document.querySelector('#chart-alloc')))")
    check(page.evaluate("!document.querySelector('#chart-tenants')"), "a member's over-time view has no cluster-wide chart")
    shoot(page, out, "history-member")


def main():
    build = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp(prefix="corral-dash-shots-")
    os.makedirs(out, exist_ok=True)
    start = time.monotonic()
    with Cluster(os.path.join(build, "src"), os.path.join(build, "examples/trainer"),
                 os.path.join(ROOT, "examples/config/local.yaml"),
                 extra_config_yaml=f"racks:\n  rack1: {{powerCapWatts: {RACK1_CAP_WATTS}}}\n") as cluster:
        ids = start_jobs(cluster)
        operator = cluster.mint_token("admin")
        operator_id = cluster.api("GET", "/v1/whoami", token=operator)[1]["id"]
        member = cluster.mint_token("member", "vision")
        with Browser.launch(width=1400, height=900) as browser:
            page = browser.page
            page.navigate(cluster.url + "/#token=" + operator)
            page.wait_for("document.querySelector('#who').innerText === 'admin'")
            check("token" not in page.evaluate("location.href"), "the fragment's token leaves the address bar")
            check(page.evaluate("sessionStorage.getItem('corral.token')") == operator, "and signs the tab in")
            try:
                admin_views(page, cluster, ids, operator_id, out)
                keyboard(page, cluster)
                member_views(page, cluster, ids, member, out)
            except BaseException:
                page.screenshot(os.path.join(out, "failure.png"))
                print(f"the page as the failure left it: {out}/failure.png")
                print("  state:", page.evaluate("""({scrollY, dialog: document.querySelector('#confirm').open,
                    view: document.body.dataset.view, focus: document.activeElement.outerHTML.slice(0, 120),
                    detail: document.querySelector('#detail')?.innerText.slice(0, 80),
                    returned: document.querySelector('#confirm').returnValue,
                    notice: document.querySelector('#notice').innerText})"""), page.console_errors())
                print("  audit:", [(e["action"], e["target"]) for e in cluster.api("GET", "/v1/audit")[1]["entries"]][-4:])
                raise
            errors = page.console_errors()
            check(not errors, f"no JavaScript errors: {errors}")
    print(f"dashboard_test: {check.count} checks passed in {time.monotonic() - start:.0f} s; screenshots in {out}")


if __name__ == "__main__":
    main()
