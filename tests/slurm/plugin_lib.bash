# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# Helpers for tests/slurm/plugin_*.sh (sourced, not a test itself).
# plugin_lab_run SPEC CONF INNER [extra crius-lab options]: a lab with both crius plugins
# from $B/plugins, the shipped plugstack snippet and CRIUS_CONF=CONF, running INNER.
plugin_preflight() {
  command -v slurmctld >/dev/null || { echo "slurmctld not installed"; exit 77; }
  [ -z "${SANITIZE:-}" ] || { echo "plugins built with -fsanitize cannot be loaded into slurmctld"; exit 77; }
  # configure --with-slurm=DIR for another release (a staged upgrade): Slurm would refuse to load them
  local built running
  built=$(sed -n 's/^SLURM_VERSION = //p' "$TOP/config.mk" 2>/dev/null)
  running=$(slurmctld -V 2>/dev/null | awk '{print $2}')
  [ -z "$built" ] || [ "$built" = "$running" ] ||
    { echo "plugins built for Slurm $built, this machine runs $running (configure --with-slurm)"; exit 77; }
  for so in job_submit_crius.so spank_crius.so; do
    [ -f "$B/plugins/$so" ] || { echo "FAIL: $B/plugins/$so not built (make B=$B)"; exit 1; }
  done
}
# The libslurmfull slurmctld runs with: what a plugin's Slurm symbols resolve to when Slurm loads
# it. A plugin built with -z now (Debian's hardening=+all) loads only where they are defined.
libslurmfull() { ldd "$(command -v slurmctld)" | awk '/libslurmfull/ {print $3}'; }
# A job's GPUs as scontrol shows its TresPerNode: "gres:gpu:N" up to Slurm 23.02, "gres/gpu:N"
# from 23.11 (slurm_plugin/slurm_compat.h, gpus_per_node_tres).
tres_gpu() {
  local v; v=$(slurmctld -V 2>/dev/null | awk '{print $2}')
  if printf '%s\n' 23.11 "$v" | sort -V -C; then echo "gres/gpu:$1"; else echo "gres:gpu:$1"; fi
}
# crius_tres TYPE N: a crius job's TresPerNode for N GPUs of TYPE per node: typed from 23.11,
# untyped before (job_submit_crius(8))
crius_tres() {
  local v; v=$(slurmctld -V 2>/dev/null | awk '{print $2}')
  if printf '%s\n' 23.11 "$v" | sort -V -C; then echo "gres/gpu:$1:$2"; else echo "gres:gpu:$2"; fi
}
plugin_lab_run() {
  local spec=$1 conf=$2 inner=$3; shift 3
  "$TOP/scripts/crius-lab" run --dir "$TEST_TMP/lab" --nodes "$spec" --plugins "$B/plugins" \
    --plugstack "$TOP/etc/plugstack.conf.d/crius.conf" --job-submit crius --crius-conf "$conf" "$@" -- "$inner"
}
# job_field ID NAME: one field of `scontrol show job` (AdminComment, which may hold spaces: the
# crius record's reasons, is a line of its own there)
job_field() {
  if [ "$2" = AdminComment ]; then scontrol show job "$1" | sed -n 's/^ *AdminComment=//p' | head -n1; return; fi
  scontrol show job "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n1
}
# wait_state ID STATE [seconds]: until the job is in STATE (default 30 s, then fail)
wait_state() {
  for _ in $(seq $((${3:-30} * 5))); do
    [ "$(job_field "$1" JobState)" = "$2" ] && return 0; sleep 0.2; done
  fail "job $1 not $2 after ${3:-30}s: $(scontrol show job "$1" | head -n 4)"
}
# crius_conf [--shipped-criusd] SPEC [LINE...]: a crius.toml, on standard output, for a lab of
# SPEC (TYPE:NODESxGPUS,...; a100 and v100 with their NVLink and a modest network, others
# PCIe 4.0-like), with a [criusd] table for tests (1 s rounds, 2 s grace, no minimum run time;
# --shipped-criusd: criusd's shipped settings) whose lock is in TEST_TMP, and LINEs added to it.
crius_conf() {
  local shipped=0 part t nodes gpn intra inter
  [ "$1" = --shipped-criusd ] && { shipped=1; shift; }
  local spec=$1; shift
  echo "gpus = \"$TOP/etc/crius/gpus.toml\""
  echo "models = \"$TOP/etc/crius/models.toml\""
  for part in ${spec//,/ }; do
    t=${part%%:*} nodes=${part#*:}; gpn=${nodes#*x}; nodes=${nodes%x*}
    case $t in a100) intra=300.0 inter=25.0 ;; v100) intra=150.0 inter=12.5 ;; *) intra=31.5 inter=12.5 ;; esac
    printf '[[partition]]\nname = "%s"\ngpu = "%s"\nnodes = %d\ngpus_per_node = %d\n' "$t" "$t" "$nodes" "$gpn"
    printf 'intra_node_bw_gbs = %s\ninter_node_bw_gbs = %s\ninter_node_latency_us = 5.0\n' "$intra" "$inter"
  done
  echo "[criusd]"
  [ $shipped = 1 ] || printf 'interval_s = 1\ncheckpoint_grace_s = 2\nmin_runtime_s = 0\n'
  printf 'lock_file = "%s/criusd.lock"\n' "$TEST_TMP"
  printf '%s\n' "$@"
}
fail() { echo "FAIL: $*"; exit 1; }
# sbatch_wait SBATCH-ARGS...: like `sbatch --parsable -W` (prints the job id, fails if the
# job fails) but polls every 0.1 s instead of sbatch -W's slower interval.
sbatch_wait() {
  local id st i
  id=$(sbatch --parsable "$@") || return 1
  for ((i = 0; i < 600; i++)); do
    st=$(scontrol show job "$id" 2>/dev/null | tr ' ' '\n' | sed -n 's/^JobState=//p')
    case $st in
      COMPLETED) echo "$id"; return 0 ;;
      FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE) echo "$id"; return 1 ;;
    esac
    sleep 0.1
  done
  echo "$id"; return 1
}
