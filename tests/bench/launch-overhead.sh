#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# Launcher overhead: wall time of crius-launch bringing up N ranks that initialise
# the crius runtime (collective plan check, TP/DP/PP communicators, one TP
# all-reduce), against plain mpirun of the same program with the same plan and
# the same mpirun flags. Median of REPS runs (default 5) for N = 2..8; target <= 1.2x.
# Then the stop: one of 4 training ranks killed, the time until crius-launch has returned and
# no rank runs any more (crius-launch --kill-timeout, default 10 s, is the bound it enforces).
set -u
REPS=${REPS:-5}
RI=$B/tests/mpi/crius-rankinfo
[ -x "$RI" ] || { echo "build $RI first (make check)"; exit 1; }
unset SLURM_JOB_ID CRIUS_STAGES CRIUS_PLAN_JSON
cores=$(nproc)
root=(); [ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
now() { date +%s.%N; }
printf '%-3s %-10s %12s %14s %7s\n' N plan mpirun_s crius-launch_s ratio
worst=0
for n in 2 3 4 5 6 7 8; do
  if [ $((n % 2)) = 0 ]; then shape=(--tp 2 --dp $((n / 2))); plan="tp2xdp$((n / 2))"; else shape=(--dp $n); plan="dp$n"; fi
  json=$(crius-launch "${shape[@]}" --json | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["plan"]))')
  extra=(); [ "$n" -gt "$cores" ] && extra=(--oversubscribe --mca mpi_yield_when_idle 1)
  a=() b=()
  for _ in $(seq "$REPS"); do
    t=$(now); CRIUS_PLAN_JSON=$json mpirun -np $n "${root[@]}" "${extra[@]}" --bind-to none -x CRIUS_PLAN_JSON "$RI" >/dev/null 2>&1 || { echo "mpirun failed"; exit 1; }
    a+=("$(echo "$(now) - $t" | bc)")
    t=$(now); crius-launch "${shape[@]}" -- "$RI" >/dev/null 2>&1 || { echo "crius-launch failed"; exit 1; }
    b+=("$(echo "$(now) - $t" | bc)")
  done
  ma=$(printf '%s\n' "${a[@]}" | median); mb=$(printf '%s\n' "${b[@]}" | median)
  r=$(echo "scale=3; $mb / $ma" | bc)
  printf '%-3s %-10s %12.3f %14.3f %7.2f\n' $n "$plan" "$ma" "$mb" "$r"
  worst=$(echo "if ($r > $worst) $r else $worst" | bc)
done
echo "worst ratio ${worst}x (target <= 1.2x); median of $REPS runs each; $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"

# stop: SIGKILL to rank 2 of a tp2 x pp2 crius-train; until crius-launch returned and every rank is
# dead (gone or a zombie)
stopped() { local p st; for p in "$@"; do st=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | cut -d' ' -f1); [ -z "$st" ] || [ "$st" = Z ] || return 1; done; }
dir=$(mktemp -d); s=()
for _ in $(seq "$REPS"); do
  rm -f "$dir"/pid.*
  crius-launch --tp 2 --pp 2 -- bash -c "echo \$\$ >$dir/pid.\$RANK; exec crius-train --steps 1000000 -q" >/dev/null 2>&1 &
  launcher=$!
  for _ in $(seq 300); do [ -s "$dir/pid.0" ] && [ -s "$dir/pid.1" ] && [ -s "$dir/pid.2" ] && [ -s "$dir/pid.3" ] && break; sleep 0.1; done
  sleep 1
  pids=$(cat "$dir"/pid.0 "$dir"/pid.1 "$dir"/pid.3)
  t=$(now); kill -9 "$(cat "$dir/pid.2")"; wait "$launcher"
  # shellcheck disable=SC2086
  until stopped $pids; do sleep 0.01; done
  s+=("$(echo "$(now) - $t" | bc)")
done
rm -rf "$dir"
printf 'stop after one rank is killed (4 ranks): median %.3f s, worst %.3f s of %d (bound: --kill-timeout 10 s)\n' \
  "$(printf '%s\n' "${s[@]}" | median)" "$(printf '%s\n' "${s[@]}" | sort -n | tail -n 1)" "$REPS"
