#!/usr/bin/env bash
# The operator's commands end to end, against a real corrald on loopback (SQLite) with
# nodes registered through the API (no agents): columns and formats, selectors and their
# usage errors, bulk cancel with its confirmation, cordon/drain reasons and node states,
# tenants, reservations, tokens, audit times and -w. One case per run (a fresh corrald).
# Usage: operator_test.sh CORRAL_BINARY CORRALD_BINARY CASE
set -euo pipefail
corral=$1
corrald=$2
case=$3
source "$(dirname "$0")/corrald_harness.sh"
# run with standard input from $input
run_in() {
  rc=0
  "$corral" "$@" >"$dir/out" 2>"$dir/err" <<<"$input" || rc=$?
}
expect_rc() { [[ $rc -eq $1 ]] || fail "expected exit $1, got $rc"; }
out_has() { grep -qE -- "$1" "$dir/out" || fail "stdout lacks /$1/"; }
out_lacks() { ! grep -qE -- "$1" "$dir/out" || fail "stdout has /$1/"; }
err_has() { grep -qE -- "$1" "$dir/err" || fail "stderr lacks /$1/"; }

start_corrald

api() {  # METHOD PATH [BODY]
  curl -sf -X "$1" -H "Authorization: Bearer $CORRAL_TOKEN" -H 'Content-Type: application/json' \
    ${3:+-d "$3"} "$CORRAL_SERVER$2" >/dev/null || fail "curl $1 $2 failed"
}
add_node() {  # NAME RACK LEAF
  api POST /v1/nodes "{\"id\":\"$1\",\"gpuType\":\"H100\",\"gpuCount\":8,\"labels\":{\"spine\":\"s1\",\"leaf\":\"$3\",\"rack\":\"$2\"}}"
}
submit() {  # NAME GPUS TEAM
  cat >"$dir/spec.yaml" <<YAML
name: $1
resources:
  gpus: $2
labels:
  team: $3
command: [python, train.py]
YAML
  run submit -f "$dir/spec.yaml"
  expect_rc 0
}
# Polls `corral ARGS` until stdout matches PATTERN (10 s).
wait_for() {
  local pattern=$1
  shift
  for _ in $(seq 100); do
    run "$@"
    grep -qE -- "$pattern" "$dir/out" && return 0
    sleep 0.1
  done
  fail "corral $* never showed /$pattern/"
}
# A node joined as an agent would; job 1 runs on it and reports s3://m/1 as its model.
report_model() {
  join=$(curl -sf -H "Authorization: Bearer $(cat "$dir/data/join.token")" \
    -H 'Content-Type: application/json' "$CORRAL_SERVER/v1/agents/join" -d '{"agentUrl":"http://127.0.0.1:1","node":{"id":"n1","labels":{"rack":"r1","leaf":"l1","spine":"s1"},"gpus":[{"index":0,"uuid":"GPU-n1-0","type":"H100","nvlinkDomain":0}]},"inventory":{"source":"simulated:test"}}') ||
    fail "join failed"
  agent_token=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["token"])' "$join")
  epoch=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["epoch"])' "$join")
  cat >"$dir/train.yaml" <<YAML
name: train
resources: {gpus: 1}
command: [python, train.py]
YAML
  run submit -f "$dir/train.yaml"
  expect_rc 0
  wait_for '^1 +train +default +launching' runs
  digest="sha256:$(printf 'c%.0s' $(seq 64))"
  curl -sf -H "Authorization: Bearer $agent_token" -H 'Content-Type: application/json' \
    "$CORRAL_SERVER/v1/agents/n1/runs" \
    -d "{\"epoch\":$epoch,\"job\":1,\"attempt\":1,\"metrics\":[{\"name\":\"eval/acc\",\"step\":1,\"value\":0.9}],\"artifacts\":[{\"name\":\"model\",\"uri\":\"s3://m/1\",\"digest\":\"$digest\",\"bytes\":10}]}" >/dev/null ||
    fail "run report failed"
}
# $dir/v1.yaml: version v1 of report_model's artifact, with the YAML lines given after it.
version_file() {
  printf 'version: v1\nrun: 1\nartifactUri: s3://m/1\ndigest: "%s"\n' "$digest" >"$dir/v1.yaml"
  printf '%s\n' "$@" >>"$dir/v1.yaml"
}

case "$case" in
  jobs_columns)
    add_node dgx01 r1 l1
    submit small 8 a   # fits: placed on dgx01
    submit big 64 b    # never fits: pending
    wait_for 'dgx01' jobs
    out_has '^ID +NAME +TENANT +STATE +GPUS +NODES +AGE +WAIT/RUN +REASON$'
    out_has '^1 +small +default +(launching|running) +8 +dgx01 +[0-9]+s +run [0-9]+s'
    out_has '^2 +big +default +pending +64 +- +[0-9]+s +wait [0-9]+s '
    run jobs -o wide
    out_has '^ID +NAME +TENANT +STATE +GPUS +NODES +SIZE +GPU TYPE +CLASS +ATTEMPT +AGE +WAIT/RUN +REASON$'
    out_has '^1 +small .* 8 +H100 +standard +1 '
    run jobs -o yaml
    out_has '^jobs:$'
    out_has '^- '
    out_has '^  id: 1$'
    run jobs -o json
    out_has '"createdAtMs": [0-9]{13}'   # raw milliseconds only in JSON
    run job 1
    out_has '^submitted: +20[0-9]{2}-[0-9]{2}-[0-9]{2} [0-9:]{8} \((now|[0-9]+s ago)\)$'
    out_has '^placed: +H100 on dgx01 \(GPU 0-7\)'
    out_lacks '[0-9]{13}'
    run job 1 --utc
    out_has '^submitted: .* UTC \('
    run queue -o wide
    out_has '^POS +JOB +NAME +TENANT +GPUS +WAIT +KIND +CLASS +PLANNED START +REASON$'
    ;;
  selectors)
    add_node dgx01 r1 l1
    submit a1 1 a
    submit a2 1 a
    submit b1 1 b
    run jobs --label team=a
    [[ $(grep -cE '^[12] +a[12] ' "$dir/out") -eq 2 ]] || fail "label selector"
    out_lacks 'b1'
    run jobs --label team=a --label team=b -o json
    out_has '"jobs": \[\]'
    run jobs -l team=b
    out_has '^3 +b1 '
    out_lacks 'a1'
    run jobs --state pending,admitted -l team=a --state running,launching --tenant default
    expect_rc 0
    [[ $(grep -cE '^[12] +a[12] ' "$dir/out") -eq 2 ]] || fail "states and labels together"
    run jobs --gpu-type H999
    expect_rc 2
    err_has '^corral jobs: --gpu-type: unknown GPU type "H999"; known types: .*H100'
    run jobs --phase bogus
    expect_rc 2
    err_has '^corral jobs: --state: unknown state "bogus"; valid states: pending, admitted, launching, running, preempting, requeued, succeeded, failed, cancelled$'
    run jobs --label nonsense
    expect_rc 2
    err_has -- '--label: must be KEY=VALUE'
    run cancel abc
    expect_rc 2
    err_has '^corral cancel: a job id is a positive integer, got "abc"$'
    run cancel
    expect_rc 2
    run cancel 1 --tenant default
    expect_rc 2
    err_has 'not both'
    run job 0
    expect_rc 2
    run logs abc
    expect_rc 2
    run jobs -o bogus
    expect_rc 2
    err_has 'table,wide,json,yaml|table, wide, json, yaml'
    ;;
  bulk_cancel)
    submit a1 1 a
    submit a2 1 a
    submit b1 1 b
    input=n run_in cancel --label team=a --reason "wrong data"
    expect_rc 1
    err_has 'a1'
    err_has 'Cancel these 2 jobs\? \[y/N\]'
    err_has 'nothing cancelled'
    run jobs --state cancelled
    out_lacks 'a1'
    input=y run_in cancel --label team=a --reason "wrong data"
    expect_rc 0
    out_has '^job 1 cancelled$'
    out_has '^job 2 cancelled$'
    out_lacks 'job 3'
    run cancel --tenant default --state pending --yes -o json
    expect_rc 0
    out_has '"id": 3'
    run cancel --tenant default --yes
    expect_rc 0
    err_has 'no unfinished job matches'
    run job 1
    out_has 'cancelled by .*: wrong data'
    # Issue 38 item 13: `corral jobs` listed every job ever; now the unfinished ones.
    submit c1 1 c
    run jobs
    out_has '^4 +c1 '
    out_lacks '^1 +a1 '
    run jobs --all
    out_has '^1 +a1 +default +cancelled '
    out_has '^4 +c1 '
    ;;
  node_admin)
    add_node dgx01 r1 l1
    add_node dgx02 r1 l1
    run cordon dgx01
    expect_rc 2
    err_has -- '--reason is required'
    run cordon dgx01 --reason "PSU swap, JIRA-12"
    expect_rc 0
    out_has '^node dgx01 cordoned \(.*PSU swap, JIRA-12\)$'
    run drain dgx02 --reason "firmware"
    out_has '^node dgx02 drained'   # nothing on it: drained, not draining
    run nodes
    out_has '^NODE +STATE +GPU +GPUS +ALLOC +RACK +LEAF +HEALTH +HEARTBEAT +REASON$'
    out_has '^dgx01 +cordoned +H100 +8 +0 +r1 +l1 +ok +- +.*PSU swap, JIRA-12$'
    out_has '^dgx02 +drained +H100 .*firmware$'
    run nodes -o wide
    out_has '^NODE +STATE +GPU +GPUS +ALLOC +RACK +LEAF +SPINE +HEALTH +HEARTBEAT +UTIL +TEMP +POWER +REASON$'
    run node dgx01
    out_has '^node dgx01$'
    out_has '^state: +cordoned$'
    out_has '^gpus: +8 x H100 \(80 GiB\), 0 allocated$'
    out_has '^GPU +HEALTH +PROBLEM +UTIL +TEMP +POWER +MEMORY +THROTTLE +JOB$'
    out_has '^7 +ok '
    run undrain dgx01
    out_has '^node dgx01 active$'
    run node nope
    expect_rc 1
    err_has not_found
    # Issue 38 item 13: a node could never be removed. Not while it holds work.
    submit w1 8 a
    wait_for 'dgx01' jobs
    # Issue 38 item 6: each rack's cap and the watts in use (no agent reports a power
    # limit here: each held H100 counts at the catalog's 700 W).
    run racks
    expect_rc 0
    out_has '^RACK +CAP +IN USE +FREE +NODES +GPUS +HELD$'
    out_has '^r1 +none +5.6 kW +- +2 +16 +8$'
    run node delete dgx01
    expect_rc 1
    err_has 'node dgx01 holds work \(job 1\); drain it first'
    run node delete dgx02
    expect_rc 0
    out_has '^node dgx02 deleted$'
    run nodes
    out_lacks dgx02
    run node dgx02
    expect_rc 1
    err_has not_found
    ;;
  tenants)
    run tenant set nlp --weight 2 --quota H100=4:2 --quota A100-80GB=1 --max-pending 50
    expect_rc 0
    out_has '^tenant nlp created$'
    run tenants
    out_has '^TENANT +PARENT +WEIGHT +GPU +USED +GUARANTEED +BORROW LIMIT +PENDING$'
    out_has '^nlp +- +2 +H100 +0 +4 +2 +0$'
    out_has '^nlp +- +2 +A100-80GB +0 +1 +unlimited +0$'
    out_has '^default +- +1 +\* +0 +0 +unlimited +0$'
    run tenant set nlp --quota H100=6   # the borrow limit stays 2
    out_has '^tenant nlp updated$'
    run tenant get nlp -o json
    out_has '"borrowLimit": 2,'
    out_has '"guaranteed": 6'
    out_has '"maxPendingJobs": 50'
    cat >"$dir/t.yaml" <<'YAML'
weight: 0.5
parent: nlp
quotas:
  H100: {guaranteed: 2, borrowLimit: 0}
YAML
    run tenant set nlp-sub -f "$dir/t.yaml"
    expect_rc 0
    run tenant get nlp-sub
    out_has '^parent: +nlp$'
    out_has '^H100 +0 +2 +0 '
    run tenant set --quota H100=1 --quota A100-80GB=1:0 flags-first   # repeatable flags take one value
    expect_rc 0
    out_has '^tenant flags-first created$'
    run tenant set x --quota H999=1
    expect_rc 2
    err_has 'unknown GPU type "H999"'
    run tenant set x --quota H100=lots
    expect_rc 2
    run tenants -o yaml
    out_has '^tenants:$'
    out_has '^shares:$'
    ;;
  tenant_delete)   # needs DELETE /v1/tenants/{name} (issue 20, server side)
    run tenant set gone --weight 1
    expect_rc 0
    run tenant delete gone
    expect_rc 0
    out_has '^tenant gone deleted$'
    run tenant get gone
    expect_rc 1
    run tenant set parent-t --weight 1
    run tenant set child-t --parent parent-t
    run tenant delete parent-t
    expect_rc 1
    err_has '409'
    ;;
  reservations)
    add_node dgx01 r1 l1
    run reservation create r1 --tenant default --gpu-type H100 --count 4 --start +1h --duration 2h
    expect_rc 0
    out_has '^reservation r1$'
    out_has '^start: +20[0-9-]+ [0-9:]+ \(in (59m|1h)\)$'
    out_has '^length: +2h 00m$'
    run reservation create r2 --tenant default --node dgx01 --start now --end +30m --utc
    expect_rc 0
    out_has '^end: +.* UTC \(in (29m|30m)\)$'
    run reservations
    out_has '^ID +TENANT +STATE +GPUS +NODES +START +END$'
    out_has '^r1 +default +upcoming +4 H100 +- +20'
    out_has '^r2 +default +active +every GPU +dgx01 +20'
    out_lacks '[0-9]{13}'
    run reservation create r3 --tenant default --gpu-type H999 --count 1 --end +1h
    expect_rc 2
    err_has -- '--gpu-type: unknown GPU type'
    run reservation create r3 --tenant default --gpu-type H100 --count 1 --end tomorrow
    expect_rc 2
    err_has -- '--end: must be now, \+DURATION'
    run reservation create r3 --tenant default --gpu-type H100 --count 1 --start +2h --end +1h
    expect_rc 2
    ;;
  reservation_get_delete)   # needs GET/DELETE /v1/reservations/{id} and "state" (issue 20)
    run reservation create r1 --tenant default --gpu-type H100 --count 1 --start +1h --duration 1h --overcommit
    expect_rc 0
    run reservation get r1
    expect_rc 0
    out_has '^state: +upcoming$'
    out_has '^held by: +no node yet$'
    run reservation delete r1
    expect_rc 0
    out_has '^deleted reservation r1$'
    run reservation get r1
    expect_rc 1
    err_has not_found
    ;;
  tokens)   # needs named tokens: GET /v1/tokens, DELETE /v1/tokens/{name} (issue 20)
    run token create --name ci-bot --role member --tenant default --owner ci@example.com --expires 30d
    expect_rc 0
    out_has '^token ci-bot$'
    out_has '^expires: +20.* \(in (29|30)d\)$'
    secret=$(grep -E '^[^ :]+$' "$dir/out" | head -1)   # the one line without a space
    [[ -n "$secret" ]] || fail "no secret printed"
    run tokens
    out_has '^NAME +OWNER +ROLE +TENANT +NODE +STATUS +CREATED +EXPIRES +LAST USED$'
    out_has '^ci-bot +ci@example.com +member +default +- +active +(now|[0-9]+s ago) +in (29|30)d +never$'
    CORRAL_TOKEN=$secret run jobs
    expect_rc 0
    run token revoke ci-bot
    expect_rc 0
    out_has '^status: +revoked$'
    CORRAL_TOKEN=$secret run jobs
    expect_rc 1
    run token create --name x --role root
    expect_rc 2
    run token create --name x --role admin --expires soon
    expect_rc 2
    err_has -- '--expires: must be a duration'
    ;;
  audit_times)
    run cancel 99 --reason none   # a refusal: not audited, but harmless
    run tenant set audited --weight 3
    run audit
    out_has '^SEQ +TIME +ACTOR +ACTION +TARGET +AFTER$'
    out_has '^[0-9]+ +20[0-9]{2}-[0-9]{2}-[0-9]{2} [0-9:]{8} +.* tenant.put +tenant/audited '
    out_lacks '[0-9]{13}'
    run audit --utc -o wide
    out_has ' UTC '
    out_has 'REQUEST +BEFORE +AFTER$'
    ;;
  datasets)   # docs/datasets.md (issue 16)
    digest="sha256:$(printf 'a%.0s' $(seq 64))"
    cat >"$dir/v1.yaml" <<YAML
version: v1
uri: s3://corpus/webtext/v1/
digest: "$digest"
sizeBytes: 2199023255552
YAML
    run dataset register webtext -f "$dir/v1.yaml"
    expect_rc 0
    out_has '^dataset webtext@v1$'
    out_has '^size: +2048 GiB$'
    run dataset register webtext -f "$dir/v1.yaml"   # a retry answers the same version
    expect_rc 0
    run datasets
    out_has '^ID +TENANT +VERSIONS +LATEST$'
    out_has '^webtext +default +1 '
    run dataset versions webtext -o wide
    out_has '^VERSION +STATUS +SIZE +PRIVACY +CREATED +DIGEST +URI$'
    out_has '^v1 +pending +2048 GiB +tenant-confidential '
    run dataset status webtext@v1 quarantined
    expect_rc 1
    err_has 'reason: is required to quarantine a version'
    run dataset status webtext@v1 quarantined --reason "pii in shard 7"
    expect_rc 0
    out_has '^reason: +pii in shard 7$'
    run dataset get webtext
    expect_rc 2
    err_has 'must be DATASET@VERSION'
    run dataset get webtext@v1 -o json
    out_has '"status": "quarantined"'
    ;;
  runs)   # docs/runs.md (issue 16)
    add_node dgx01 r1 l1
    digest="sha256:$(printf 'b%.0s' $(seq 64))"
    api POST /v1/datasets/webtext/versions "{\"version\":\"v1\",\"uri\":\"s3://c/w/\",\"digest\":\"$digest\",\"sizeBytes\":1073741824,\"status\":\"passed\"}"
    cat >"$dir/run.yaml" <<YAML
name: pretrain
resources: {gpus: 2}
command: [python, train.py]
lineage:
  datasets: [webtext@v1]
  code: {repo: github.com/acme/llm, commit: 3f2c9a1b5d7e3f2c9a1b5d7e3f2c9a1b5d7e3f2c}
YAML
    run submit -f "$dir/run.yaml"
    expect_rc 0
    wait_for '^1 +pretrain +default +launching +1 +webtext@v1 +github.com/acme/llm@3f2c9a1b5d7e ' runs
    out_has '^ID +NAME +TENANT +STATUS +ATTEMPTS +DATASETS +CODE +CREATED$'
    run runs --dataset webtext@v2
    expect_rc 0
    out_lacks 'pretrain'
    run run get 1
    expect_rc 0
    out_has '^run 1 \(pretrain\)$'
    out_has "^dataset: +webtext@v1  $digest  1.0 GiB  passed$"
    out_has '^ATTEMPT +GPUS +TYPE +PACKED +NODES +RESTORED FROM +STARTED$'
    out_has '^1 +2 +H100 +nvlink +dgx01 +- '
    run runs reproduce 1
    expect_rc 0
    out_has '^run 2 submitted, reproducing run 1 \(sha256:[0-9a-f]{64}\)$'
    run run get 2
    out_has '^reproduces: +run 1$'
    run run metrics 1
    expect_rc 0
    out_has '^NAME +STEP +VALUE +ATTEMPT +REPORTED$'
    run run get 99
    expect_rc 1
    err_has 'run 99 not found'
    ;;
  models)   # docs/models.md (issue 17)
    report_model
    api POST /v1/models/llm/versions "{\"version\":\"v1\",\"run\":1,\"artifactUri\":\"s3://m/1\",\"digest\":\"$digest\",\"gates\":{\"metrics\":[{\"metric\":\"eval/acc\",\"min\":0.95}]}}"
    run models
    expect_rc 0
    out_has '^ID +TENANT +VERSIONS +LATEST$'
    out_has '^llm +default +1 '
    run model promote llm production v1 --reason "first release"
    expect_rc 1
    err_has 'gated: v1: metric eval/acc >= 0.95 failed \(eval/acc is 0.9\)'
    run model promote llm staging v1 --reason "try it"
    expect_rc 0
    out_has '^alias staging of llm points at v1$'
    run model get llm
    expect_rc 0
    out_has '^VERSION +RUN +DIGEST +GATES +APPROVED +CREATED$'
    out_has '^v1 +1 +sha256:cccccccccccc +1 metrics +- '
    out_has '^staging +v1 +- +- +no '
    run model history llm staging
    expect_rc 0
    out_has '^WHEN +KIND +FROM +TO +BY +REASON +GATES$'
    out_has ' move +- +v1 +.* try it +- *$'
    run model rollback llm staging
    expect_rc 1
    err_has 'no earlier version'
    ;;
  drift)   # docs/drift.md (issue 17)
    report_model
    api POST /v1/models/llm/versions "{\"version\":\"v1\",\"run\":1,\"artifactUri\":\"s3://m/1\",\"digest\":\"$digest\"}"
    api PUT /v1/tenants/default '{"retraining":{"maxGpus":1,"gpuHours":0,"period":"7d"}}'
    python3 -c 'import json; print(json.dumps({"features": {"score": [i / 100 for i in range(200)]}}))' >"$dir/ref.json"
    run drift reference llm v1 -f "$dir/ref.json"
    expect_rc 0
    out_has '^reference of llm@v1: score \(200 values\)$'
    cat >"$dir/retrain.yaml" <<YAML
name: retrain-llm
resources: {gpus: 2}
command: [python, train.py]
YAML
    run drift retraining llm -f "$dir/retrain.yaml"
    expect_rc 1
    err_has "job.resources.gpus: tenant default's retraining budget allows 1 GPUs at once"
    sed -i 's/gpus: 2/gpus: 1/' "$dir/retrain.yaml"
    run drift retraining llm -f "$dir/retrain.yaml"
    expect_rc 0
    out_has '^drift of llm submits job retrain-llm now$'
    api POST /v1/models/llm/versions/v1/drift "$(python3 -c 'import json; print(json.dumps({"features": {"score": [1.5 + i / 100 for i in range(150)]}, "segment": "eu"}))')"
    run drift reports llm v1
    expect_rc 0
    out_has '^WHEN +KIND +SEGMENT +DRIFTED +FEATURES +PERFORMANCE +RETRAINING$'
    out_has ' features +eu +yes +score of 1 +- +submitted job 2$'
    wait_for 'held: retraining budget: tenant default.s retraining jobs used 0.0 of its 0 GPU-hours' job 2
    run drift retraining llm
    expect_rc 0
    out_has '^retraining template: job retrain-llm, 1 GPUs, set by '
    out_has '^budget of tenant default: 1 GPUs at once, 0 GPU-hours per 7d$'
    out_has '^in use: 0 GPUs now, 0.0 GPU-hours since '
    out_has '^JOB +VERSION +REPORT +PHASE +GPUS +SUBMITTED$'
    out_has '^2 +v1 +1 +pending +1 '
    run drift retraining llm --delete
    expect_rc 0
    out_has '^model llm has no retraining template now$'
    run drift reports llm v9
    expect_rc 1
    ;;
  features)   # docs/features.md (issue 17)
    api POST /v1/features/user-stats/versions '{"version":"v1","schema":{"clicks":"int"},"source":"kafka://clicks"}'
    api POST /v1/features/user-stats/versions/v1/values '{"values":[{"entity":"u1","eventTimeMs":1780000000000,"values":{"clicks":3}},{"entity":"u1","eventTimeMs":1780000600000,"values":{"clicks":5}}]}'
    run features
    expect_rc 0
    out_has '^NAME +VERSION +TENANT +FEATURES +SOURCE +CREATED$'
    out_has '^user-stats +v1 +default +1 +kafka://clicks '
    run feature lookup user-stats@v1 --entity u1 --entity u2 --at 2026-05-28T20:35:00Z --ttl 1h --utc
    expect_rc 0
    out_has '^ENTITY +AT +EVENT TIME +VALUES$'
    out_has '^u1 +2026-05-28 20:35.* +2026-05-28 20:26.* +\{"clicks":3\}$'
    out_has '^u2 +.* +- +\(none within the TTL\)$'
    run feature lookup user-stats@v1 --entity u1 --at tomorrowish
    expect_rc 2
    err_has '--at'
    ;;
  model_register)   # issue 42 item 5: POST /v1/models/{id}/versions without curl
    report_model
    version_file 'inputSchema: {tokens: "int32[]"}' \
      'gates: {metrics: [{metric: eval/acc, min: 0.8}], approvals: [safety]}'
    run model register llm -f "$dir/v1.yaml"
    expect_rc 0
    out_has '^model llm@v1: registered$'
    out_has '^run: +1$'
    out_has '^artifact: +s3://m/1$'
    out_has "^digest: +$digest$"
    out_has '^input: +tokens int32\[\]$'
    out_has '^gate: +metric eval/acc >= 0.8$'
    out_has '^gate: +approval safety: not yet \(an admin\)$'
    out_has '^created: +token:bootstrap-admin, 20[0-9-]+ [0-9:]+ \((now|[0-9]+s ago)\)$'
    out_lacks '[0-9]{13}'
    run model register llm -f "$dir/v1.yaml"   # the same content again: a retry
    expect_rc 0
    out_has '^model llm@v1: already registered with this content$'
    input=$(python3 -c 'import json,sys; print(json.dumps({"version": "v2", "run": 1, "artifactUri": "s3://m/1", "digest": sys.argv[1]}))' "$digest")
    run_in model register llm -f - -o json
    expect_rc 0
    out_has '"version": "v2"'
    out_has '"createdAtMs": [0-9]{13}'
    out_has '"approved": \[\]'
    # Refusals name the field and the reason as the API gives them.
    sed -e 's/^version: v1/version: v3/' -e 's/cccc/dddd/' "$dir/v1.yaml" >"$dir/v3.yaml"
    run model register llm -f "$dir/v3.yaml"
    expect_rc 1
    err_has "^corral model register: 400 invalid_argument: digest: does not match the artifact run 1 reported at that URI \($digest\)$"
    sed -e 's/^version: v1/version: v3/' -e 's/min: 0.8/max: 0.8, min: 0.1/' "$dir/v1.yaml" >"$dir/v3.yaml"
    run model register llm -f "$dir/v3.yaml"
    expect_rc 1
    err_has '^corral model register: 400 invalid_argument: gates.metrics\[0\]: needs exactly one of min and max$'
    sed -e 's/^run: 1/run: 9/' "$dir/v1.yaml" >"$dir/v3.yaml"
    run model register llm -f "$dir/v3.yaml"
    expect_rc 1
    err_has '^corral model register: 400 invalid_argument: run: unknown run 9$'
    sed -e 's/s3:\/\/m\/1/s3:\/\/m\/2/' "$dir/v1.yaml" >"$dir/v3.yaml"
    run model register llm -f "$dir/v3.yaml"   # v1 again, from another artifact
    expect_rc 1
    err_has '^corral model register: 400 invalid_argument: artifactUri: run 1 reported no artifact at s3://m/2$'
    run model register llm -f "$dir/nope.yaml"
    expect_rc 2
    err_has 'nope.yaml: cannot be read'
    run model get llm
    out_has '^v1 +1 +sha256:cccccccccccc +1 metrics, 1 approvals +- '
    out_has '^v2 +1 '
    ;;
  model_approve)   # issue 42 item 5: POST .../versions/{v}/approvals without curl
    report_model
    version_file 'gates: {approvals: [safety]}'
    run model register llm -f "$dir/v1.yaml"
    expect_rc 0
    run model promote llm production v1
    expect_rc 1
    err_has 'approval safety failed \(not approved\)'
    # Separation of duties: the admin token registered v1, so it may not approve it.
    run model approve llm v1 safety --reason "red-teamed"
    expect_rc 1
    err_has '^corral model approve: 403 permission_denied: approval safety of llm@v1: its registrant cannot approve it; someone else must$'
    run token create --name reviewer --role admin --owner ops@example.com
    expect_rc 0
    reviewer=$(grep -E '^[^ :]+$' "$dir/out" | head -1)
    CORRAL_TOKEN=$reviewer run model approve llm v1 safety --reason "red-teamed"
    expect_rc 0
    out_has '^model llm@v1: approval safety recorded$'
    out_has '^gate: +approval safety: approved by token:reviewer, 20[0-9-]+ [0-9:]+ \((now|[0-9]+s ago)\): red-teamed$'
    out_lacks '[0-9]{13}'
    CORRAL_TOKEN=$reviewer run model approve llm v1 safety --reason "red-teamed" -o json
    expect_rc 0   # a retry
    out_has '"name": "safety"'
    out_has '"atMs": [0-9]{13}'
    CORRAL_TOKEN=$reviewer run model approve llm v1 safety
    out_has '^model llm@v1: approval safety was recorded already$'
    CORRAL_TOKEN=$reviewer run model approve llm v1 legal
    expect_rc 1
    err_has '^corral model approve: 400 invalid_argument: name: must be one of the approvals llm@v1 asks for: \["safety"\]$'
    CORRAL_TOKEN=$reviewer run model approve llm v9 safety
    expect_rc 1
    err_has '^corral model approve: 404 not_found: model version llm@v9 not found$'
    run model promote llm production v1 --reason "approved"
    expect_rc 0
    out_has '^alias production of llm points at v1$'
    ;;
  features_write)   # issue 42 item 5: POST /v1/features/{name}/versions/{v}/values without curl
    api POST /v1/features/user-stats/versions '{"version":"v1","schema":{"clicks":"int","ctr":"float"},"source":"kafka://clicks"}'
    cat >"$dir/values.yaml" <<'YAML'
values:
  - {entity: u1, eventTimeMs: 1780000000000, values: {clicks: 3, ctr: 0.12}}
  - {entity: u2, eventTimeMs: 1780000600000, values: {clicks: 5}}
watermarks: {"kafka://clicks": 1780000660000}
YAML
    run features write user-stats@v1 -f "$dir/values.yaml" --utc
    expect_rc 0
    out_has '^wrote 2 values to user-stats@v1$'
    out_has '^event times: 2026-05-28 20:26:40 UTC \([0-9]+d ago\) to 2026-05-28 20:36:40 UTC \([0-9]+d ago\)$'
    out_has '^watermark: +kafka://clicks at 2026-05-28 20:37:40 UTC \([0-9]+d ago\)$'
    out_lacks '[0-9]{13}'
    run feature lookup user-stats@v1 --entity u1 --entity u2 --at 2026-05-28T20:40:00Z --ttl 1h
    out_has '^u1 .*\{"clicks":3,"ctr":0.12\}$'
    out_has '^u2 .*\{"clicks":5\}$'
    input='{"values": [{"entity": "u3", "eventTimeMs": 1780000000000, "values": {"clicks": 1}}]}'
    run_in features write user-stats@v1 -f - -o json
    expect_rc 0
    out_has '"written": 1'
    # Refusals name the field and the reason as the API gives them.
    input='{"values": [{"entity": "u4", "eventTimeMs": 1780000000000, "values": {"clicks": 1}}, {"entity": "u4", "eventTimeMs": 1780000000000, "values": {"clicks": "many"}}]}'
    run_in features write user-stats@v1 -f -
    expect_rc 1
    err_has '^corral features write: 400 invalid_argument: values\[1\].values.clicks: must be a int$'
    input='{"values": [{"entity": "u4", "eventTimeMs": 1780000000000, "values": {"views": 1}}]}'
    run_in features write user-stats@v1 -f -
    expect_rc 1
    err_has '^corral features write: 400 invalid_argument: values\[0\].values.views: is not in the schema$'
    input='{"values": [], "watermarks": {"kafka://clicks": -1}}'
    run_in features write user-stats@v1 -f -
    expect_rc 1
    err_has '^corral features write: 400 invalid_argument: watermarks.kafka://clicks: '
    run features write user-stats@v9 -f "$dir/values.yaml"
    expect_rc 1
    err_has '^corral features write: 404 not_found: feature set user-stats@v9 not found$'
    run features write user-stats -f "$dir/values.yaml"
    expect_rc 2
    err_has '^corral features write: must be NAME@VERSION$'
    ;;
  drift_report)   # issue 42 item 5: POST /v1/models/{id}/versions/{v}/drift without curl
    report_model
    api POST /v1/models/llm/versions "{\"version\":\"v1\",\"run\":1,\"artifactUri\":\"s3://m/1\",\"digest\":\"$digest\"}"
    python3 -c 'import json; print(json.dumps({"features": {"score": [1.5 + i / 100 for i in range(150)]}, "segment": "eu"}))' >"$dir/shifted.json"
    python3 -c 'import json; print(json.dumps({"features": {"score": [i / 75 for i in range(150)]}}))' >"$dir/same.json"
    run drift report llm v1 -f "$dir/shifted.json"
    expect_rc 1
    err_has '^corral drift report: 409 failed_precondition: llm@v1 has no drift reference: set one first \(POST .../drift/reference\)$'
    python3 -c 'import json; print(json.dumps({"features": {"score": [i / 100 for i in range(200)]}}))' >"$dir/ref.json"
    run drift reference llm v1 -f "$dir/ref.json"
    expect_rc 0
    run drift report llm v1 -f "$dir/shifted.json"
    expect_rc 0
    out_has '^drift report 1 of llm@v1, segment eu$'
    out_has '^when: +20[0-9-]+ [0-9:]+ \((now|[0-9]+s ago)\)$'
    out_has '^drifted: +score of 1$'
    out_has '^retraining: +no template$'
    out_has '^FEATURE +DRIFTED +STATISTIC +VALUE +THRESHOLD +PSI +JENSEN-SHANNON +REFERENCE +CURRENT$'
    out_has '^score +yes +KS p-value +[0-9.e-]+ +0.05 +[0-9.e-]+ +[0-9.e-]+ +200 +150$'
    out_lacks '[0-9]{13}'
    run drift report llm v1 -f "$dir/same.json" -o json
    expect_rc 0
    out_has '"drifted": false'
    out_has '"atMs": [0-9]{13}'
    out_has '"ksP": '
    input='{"features": {"score": [0.5, 1.0, 1.5]}, "segment": "us"}'
    run_in drift report llm v1 -f -
    expect_rc 0
    out_has '^drift report 3 of llm@v1, segment us$'
    out_has '^score +(yes|no) +KS p-value '
    run drift reports llm v1
    [[ $(grep -cE '^20' "$dir/out") -eq 3 ]] || fail "3 reports listed"
    # Refusals name the field and the reason as the API gives them.
    run drift report llm v9 -f "$dir/shifted.json"
    expect_rc 1
    err_has '^corral drift report: 404 not_found: model version llm@v9 not found$'
    input='{"features": {"score": [0.5, "high"]}}'
    run_in drift report llm v1 -f -
    expect_rc 1
    err_has '^corral drift report: 400 invalid_argument: features.score\[1\]: must be a finite number$'
    input='{"features": {"score": [0.5]}, "segment": "EU West"}'
    run_in drift report llm v1 -f -
    expect_rc 1
    err_has '^corral drift report: 400 invalid_argument: segment: must be a segment label \(a DNS label\)$'
    run drift reports llm v1
    [[ $(grep -cE '^20' "$dir/out") -eq 3 ]] || fail "a refused report was kept"
    ;;
  watch)
    add_node dgx01 r1 l1
    rc=0
    timeout --preserve-status -s INT 5 "$corral" nodes -w >"$dir/out" 2>"$dir/err" || rc=$?
    expect_rc 0
    [[ $(grep -c '^NODE ' "$dir/out") -ge 2 ]] || fail "-w drew fewer than 2 tables"
    grep -q $'\033\\[2J' "$dir/out" && fail "cleared the screen of a pipe"
    run cancel -w 1
    expect_rc 2   # only lists watch
    ;;
  unreachable)
    run jobs --server http://127.0.0.1:1
    expect_rc 2
    err_has '^corral jobs: cannot reach http://127.0.0.1:1: connection refused or no route \(is corrald running, and is the address right\?\)$'
    ;;
  *)
    echo "unknown case $case" >&2
    exit 2
    ;;
esac
echo "ok"
