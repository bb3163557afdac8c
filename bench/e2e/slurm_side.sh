#!/usr/bin/env bash
# The Slurm half of issue #6's end-to-end comparison, on this machine: Slurm 22.05 from
# Debian on a local 8-node x 8-fake-GPU cluster (../shared/peers/slurm), measured by its
# bench.sh with
#   burst  2,000 trivial 1-GPU batch jobs from one client, submit -> all done (jobs/s)
#   idle   50 1-GPU batch jobs one at a time on an empty cluster: submit -> job script
#          starts (ms, client clock to $EPOCHREALTIME in the job)
#   gang   10 16-GPU gangs (-N2 --gres=gpu:8 --switches=1) on an empty cluster: submit
#          -> both ranks started (ms)
# in the `default` profile (Slurm's scheduler defaults) and the `tuned` one
# (batch_sched_delay=0, Slurm's high-throughput setting). The Corral half runs the same
# shapes against corrald + corral-agent (bench/e2e/, issue #6).
#   bench/e2e/slurm_side.sh                     # N=2000 REPEATS=1, both profiles
#   N=200 PROFILES=tuned bench/e2e/slurm_side.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
peer=${SLURM_PEER:-$(cd .. && pwd)/shared/peers/slurm}
[[ -x "$peer/bench.sh" ]] || { echo "no Slurm peer at $peer" >&2; exit 1; }
n=${N:-2000}
repeats=${REPEATS:-1}

echo "# $(date -u +%FT%TZ) $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
declare -A summary
for profile in ${PROFILES:-default tuned}; do
  out=$(OUT=$(mktemp -d /tmp/slurm-e2e.XXXXXX) PROFILE=$profile N=$n REPEATS=$repeats ONLY="burst idle gang" "$peer/bench.sh" 2>&1 |
    tee /dev/stderr)
  summary[$profile]=$(grep '^SUMMARY' <<<"$out" | tail -1)
done

field() { grep -o " $2=[0-9.]*" <<<"${summary[$1]}" | cut -d= -f2; }
echo
echo "| Slurm profile | 2,000 1-GPU jobs submit→done (jobs/s) | 1-GPU submit→start p50 / p99 (ms) | 16-GPU gang submit→start p50 / p99 (ms) |"
echo "| --- | --- | --- | --- |"
for profile in ${PROFILES:-default tuned}; do
  echo "| $profile | $(field "$profile" e2e_serial_per_s) | $(field "$profile" idle_lat_p50_ms) / $(field "$profile" idle_lat_p99_ms) | $(field "$profile" gang16_start_p50_ms) / $(field "$profile" gang16_start_p99_ms) |"
done
for profile in ${PROFILES:-default tuned}; do echo "${summary[$profile]}"; done
