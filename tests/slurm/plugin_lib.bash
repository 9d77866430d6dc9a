# Helpers for tests/slurm/plugin_*.sh (sourced, not a test itself).
# plugin_lab_run SPEC CONF INNER [extra crius-lab options]: a lab with both crius plugins
# from $B/plugins, the shipped plugstack snippet and CRIUS_CONF=CONF, running INNER.
plugin_preflight() {
  command -v slurmctld >/dev/null || { echo "slurmctld not installed"; exit 77; }
  [ -z "${SANITIZE:-}" ] || { echo "plugins built with -fsanitize cannot be loaded into slurmctld"; exit 77; }
  for so in job_submit_crius.so spank_crius.so; do
    [ -f "$B/plugins/$so" ] || { echo "FAIL: $B/plugins/$so not built (make B=$B)"; exit 1; }
  done
}
plugin_lab_run() {
  local spec=$1 conf=$2 inner=$3; shift 3
  "$TOP/scripts/crius-lab" run --dir "$TEST_TMP/lab" --nodes "$spec" --plugins "$B/plugins" \
    --plugstack "$TOP/etc/plugstack.conf.d/crius.conf" --job-submit crius --crius-conf "$conf" "$@" -- "$inner"
}
# job_field ID NAME: one field of `scontrol show job`
job_field() { scontrol show job "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n1; }
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
