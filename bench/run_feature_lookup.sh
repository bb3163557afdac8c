#!/usr/bin/env bash
# Point-in-time lookups through the API (docs/features.md): one release corrald on SQLite,
# a feature set with 10,000 entities x 20 values (written 10,000 a request), then
# ROUNDS lookup requests of 10,000 rows each (one per entity, at random instants, TTL
# 1 day). Prints lookups per second over the rounds, and the write rate.
#   bench/run_feature_lookup.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib/corrald.sh
rounds=${1:-5}
build_release
start_corrald "$unlimited_config"
trap stop_corrald EXIT
/usr/bin/python3 - "$corrald_addr" "$corrald_token" "$rounds" <<'PY'
import json, random, sys, time, urllib.request
addr, token, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
def post(path, body):
    req = urllib.request.Request(f"http://{addr}{path}", data=json.dumps(body).encode(),
                                 headers={"Authorization": f"Bearer {token}",
                                          "Content-Type": "application/json"})
    with urllib.request.urlopen(req) as r:
        return json.load(r)
post("/v1/features/bench/versions", {"version": "v1", "schema": {"clicks": "int"}})
rng = random.Random(1)
values = [{"entity": f"user-{e}", "eventTimeMs": rng.randrange(1_000_000_000),
           "values": {"clicks": i}} for e in range(10_000) for i in range(20)]
rng.shuffle(values)
t0 = time.time()
for b in range(0, len(values), 10_000):
    post("/v1/features/bench/versions/v1/values", {"values": values[b:b + 10_000]})
write_s = time.time() - t0
times = []
for _ in range(rounds):
    rows = [{"entity": f"user-{e}", "atMs": rng.randrange(1_000_000_000)} for e in range(10_000)]
    t = time.time()
    answer = post("/v1/features/bench/versions/v1/lookup", {"rows": rows, "ttlMs": 86_400_000})
    times.append(time.time() - t)
    assert len(answer["results"]) == 10_000
times.sort()
median = times[len(times) // 2]
print(f"wrote {len(values)} values in {write_s:.1f} s ({len(values) / write_s:.0f}/s)")
print(f"lookup of 10,000 rows over 10,000 entities: median {median * 1000:.0f} ms "
      f"({10_000 / median:.0f} lookups/s), over {rounds} requests")
PY
