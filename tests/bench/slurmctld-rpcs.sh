#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# The load crius puts on slurmctld, counted by slurmctld itself (sdiag's RPCs by message type) on
# a lab cluster, and extrapolated to 10,000 running crius jobs against the budget of 10 RPCs per
# second (issue 53). Three windows of RPC_WINDOW seconds (60) on the same cluster:
#   slurm  RPC_JOBS (8) plain batch jobs, each one srun step, no criusd: Slurm's own traffic;
#   crius  as many crius jobs (crius-launch --launcher srun -- crius-train --emulate), each
#          reporting its progress every RPC_PROGRESS_S (10) seconds, and criusd deciding every
#          RPC_ROUND_S (10) seconds;
#   quiet  the same crius jobs with the shipped [launch] progress_interval_s and criusd idle
#          between its shipped rounds (nothing but first reports and Slurm's own).
# What crius adds per message type is the crius window less the slurm window; per progress
# report and per criusd round it is divided by the reports and rounds that window held. The
# extrapolation: 10,000 jobs / progress_interval_s reports per second, and one round every
# interval_s (the shipped settings), plus what each job start costs.
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
for c in slurmctld sdiag jq; do command -v $c >/dev/null || { echo "skip: $c not installed"; exit 0; }; done
[ -x "$B/sbin/criusd" ] && [ -f "$B/plugins/job_submit_crius.so" ] || { echo "skip: plugins or criusd not built"; exit 0; }
export RPC_JOBS=${RPC_JOBS:-8} RPC_WINDOW=${RPC_WINDOW:-60} RPC_PROGRESS_S=${RPC_PROGRESS_S:-10} RPC_ROUND_S=${RPC_ROUND_S:-10}
conf=$TEST_TMP/crius.toml
crius_conf a100:2x4 >"$conf"
sed -i "s/^interval_s = .*/interval_s = $RPC_ROUND_S/" "$conf"
grep -q "^interval_s = $RPC_ROUND_S" "$conf" || printf '[criusd]\ninterval_s = %s\n' "$RPC_ROUND_S" >>"$conf"
cat >"$TEST_TMP/inner.sh" <<'INNER'
#!/usr/bin/env bash
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
cd "$TEST_TMP"
# sdiag's RPC counts by message type, as "TYPE COUNT" lines
counts() { sdiag | awk '/by message type/ { on = 1; next } /by user/ { on = 0 } on && /count:/ {
  for (i = 1; i <= NF; i++) if ($i ~ /^count:/) { sub("count:", "", $i); print $1, $i } }' | sort; }
all_running() { [ "$(squeue -h -t R -o %i | wc -l)" -ge "$RPC_JOBS" ]; }
wait_running() { for _ in $(seq 300); do all_running && return 0; sleep 0.2; done; squeue; fail "jobs not running"; }
window() {  # window NAME: the counts of RPC_WINDOW seconds into NAME.counts
  sdiag --reset >/dev/null || fail "sdiag --reset"
  sleep "$RPC_WINDOW"
  counts >"$1.counts"
}
### slurm: plain jobs, one srun step each
for i in $(seq "$RPC_JOBS"); do
  sbatch --parsable -N1 --gres=gpu:1 -o /dev/null --wrap 'srun sleep 600' >/dev/null || fail "plain sbatch"
done
wait_running; sleep 3
window slurm
scancel -u root; sleep 3
### crius: the same number of crius jobs, frequent progress and rounds
export CRIUS_PROGRESS_INTERVAL=$RPC_PROGRESS_S
run='exec crius-launch --launcher srun -- crius-train --emulate -q --time-scale 1'
for i in $(seq "$RPC_JOBS"); do
  sbatch --parsable -o "job.$i.out" --crius-model=bert__1.3B --crius-global-batch=32 --crius-iters=100000 \
    --crius-max-gpus=1 --wrap "$run" >/dev/null || fail "crius sbatch"
done
wait_running; sleep 3
criusd --json >rounds.json 2>criusd.err & pid=$!
sleep 1
window crius
kill "$pid"; wait "$pid"
### quiet: the shipped progress interval, no criusd round in the window
scancel -u root; sleep 3
unset CRIUS_PROGRESS_INTERVAL
for i in $(seq "$RPC_JOBS"); do
  sbatch --parsable -o "quiet.$i.out" --crius-model=bert__1.3B --crius-global-batch=32 --crius-iters=100000 \
    --crius-max-gpus=1 --wrap "$run" >/dev/null || fail "crius sbatch"
done
wait_running; sleep 3
window quiet
# what one job's start costs, crius's and a plain one's: submitted alone, counted over the next
# 10 s (a crius job reports its progress at once); nothing here asks slurmctld meanwhile
scancel -u root; sleep 3
export CRIUS_PROGRESS_INTERVAL=600
sdiag --reset >/dev/null
sbatch --parsable -o start.out --crius-model=bert__1.3B --crius-global-batch=32 --crius-iters=100000 \
  --crius-max-gpus=1 --wrap "$run" >/dev/null || fail "crius sbatch"
sleep 10
counts >start_crius.counts
grep -q '^crius-progress=' <(squeue -h -o %k) || fail "the crius job did not report its progress in 10 s"
scancel -u root; sleep 3
sdiag --reset >/dev/null
sbatch --parsable -o /dev/null -N1 --gres=gpu:1 --wrap 'srun sleep 600' >/dev/null || fail "plain sbatch"
sleep 10
counts >start_slurm.counts
scancel -u root
INNER
chmod +x "$TEST_TMP/inner.sh"
plugin_lab_run a100:2x4 "$conf" "$TEST_TMP/inner.sh" >"$TEST_TMP/lab.out" 2>&1 || { cat "$TEST_TMP/lab.out"; exit 1; }

# The figures.
python3 - "$TEST_TMP" <<'PY'
import os, sys
d = sys.argv[1]
def read(name):
    out = {}
    for line in open(os.path.join(d, name + ".counts")):
        t, n = line.split()
        out[t] = int(n)
    return out
jobs, window = int(os.environ["RPC_JOBS"]), float(os.environ["RPC_WINDOW"])
progress_s, round_s = float(os.environ["RPC_PROGRESS_S"]), float(os.environ["RPC_ROUND_S"])
slurm, crius, quiet = read("slurm"), read("crius"), read("quiet")
rounds = crius.get("REQUEST_JOB_INFO", 0) - slurm.get("REQUEST_JOB_INFO", 0)  # one job table read a round
added = {t: crius.get(t, 0) - slurm.get(t, 0) for t in set(slurm) | set(crius)}
added = {t: n for t, n in added.items() if n != 0}
print(f"{jobs} running jobs, {window:.0f} s windows; RPCs slurmctld counted (sdiag), by message type:")
print(f"  {'type':34} {'slurm':>6} {'crius':>6} {'quiet':>6}")
for t in sorted(set(slurm) | set(crius) | set(quiet)):
    print(f"  {t:34} {slurm.get(t, 0):6} {crius.get(t, 0):6} {quiet.get(t, 0):6}")
reports = jobs * window / progress_s
updates = crius.get("REQUEST_UPDATE_JOB", 0) - slurm.get("REQUEST_UPDATE_JOB", 0)
per_report = updates / reports
criusd_types = ["REQUEST_JOB_INFO", "REQUEST_NODE_INFO", "REQUEST_PARTITION_INFO", "REQUEST_RESERVATION_INFO",
                "REQUEST_BUILD_INFO", "REQUEST_ASSOC_MGR_INFO", "REQUEST_PING", "REQUEST_CONTROL_STATUS"]
by_criusd = sum(crius.get(t, 0) - slurm.get(t, 0) for t in criusd_types)
per_round = by_criusd / max(rounds, 1)
other = sum(added.values()) - updates - by_criusd
print(f"crius window: {updates} progress updates for {reports:.0f} reports due ({per_report:.2f} RPC per report); "
      f"criusd: {by_criusd} RPCs in {rounds} rounds ({per_round:.2f} per round); other added RPCs: {other}")
quiet_added = sum(quiet.values()) - sum(slurm.values())
print(f"quiet window (shipped progress interval, no round): {sum(quiet.values())} RPCs, "
      f"{quiet_added:+d} against Slurm alone")
start_crius, start_slurm = read("start_crius"), read("start_slurm")
per_start = sum(start_crius.values()) - sum(start_slurm.values())
print(f"one job's start: {sum(start_crius.values())} RPCs for a crius job to its first report, "
      f"{sum(start_slurm.values())} for a plain job ({per_start:+d})")
for t in sorted(set(start_crius) | set(start_slurm)):
    if start_crius.get(t, 0) != start_slurm.get(t, 0):
        print(f"  {t:34} {start_slurm.get(t, 0):6} {start_crius.get(t, 0):6}")
# 10,000 running jobs at the shipped settings
N, interval, round_every = 10000, 1200.0, 300.0
progress = N / interval * per_report
rounds_rps = per_round / round_every
print(f"10,000 running crius jobs, shipped settings ([launch] progress_interval_s {interval:.0f}, "
      f"[criusd] interval_s {round_every:.0f}):")
print(f"  progress {progress:.2f} RPC/s + criusd rounds {rounds_rps:.3f} RPC/s = {progress + rounds_rps:.2f} RPC/s "
      f"(budget 10); each job start adds {per_start:+d} RPCs once")
PY
