# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# Shared helpers for tests/mpi/launch_*.sh and tests/slurm/launch_*.sh (sourced).
fail() { echo "FAIL: $*"; exit 1; }
need_mpi() {
  command -v mpirun >/dev/null || { echo "SKIP: mpirun not installed"; exit 77; }
  [ -x "$B/bin/crius-launch" ] || fail "$B/bin/crius-launch not built (make B=... all check)"
}
# compare_ranks PLAN_JSON RANKINFO_OUTPUT [uneven]: every rank's environment and the
# groups seen from inside its MPI communicators match the dry-run layout.
compare_ranks() {
  python3 - "$@" <<'PY'
import json, sys
plan = json.load(open(sys.argv[1]))["ranks"]
lines = [l for l in open(sys.argv[2]) if l.startswith("RANKINFO ")]
got = {}
for l in lines:
    j = json.loads(l[len("RANKINFO "):])
    got[j["rank"]] = j
errors = []
if sorted(got) != list(range(len(plan))):
    errors.append(f"ranks reporting: {sorted(got)}, expected 0..{len(plan)-1}")
sizes = {}
for r in plan:
    sizes[r["stage"]] = sizes.get(r["stage"], 0) + 1
equal = len(set(sizes.values())) == 1
hashes = set()
for r in plan:
    g = got.get(r["rank"])
    if g is None:
        continue
    e = g["env"]
    want = {"RANK": r["rank"], "WORLD_SIZE": len(plan), "CRIUS_TP_RANK": r["tp_rank"], "CRIUS_DP_RANK": r["dp_rank"],
            "CRIUS_PP_RANK": r["stage"], "CRIUS_TP_SIZE": len(r["tp_group"]), "CRIUS_DP_SIZE": len(r["dp_group"]),
            "CRIUS_STAGES": len(sizes), "LOCAL_RANK": r["local_rank"], "CRIUS_RANK_ORDER": "tp-dp-pp"}
    for k, v in want.items():
        if str(e.get(k)) != str(v):
            errors.append(f"rank {r['rank']}: {k}={e.get(k)} want {v}")
    for k in ("MASTER_ADDR", "MASTER_PORT", "LOCAL_WORLD_SIZE", "GROUP_RANK", "CRIUS_MICRO_BATCHES"):
        if k not in e:
            errors.append(f"rank {r['rank']}: {k} not set")
    hashes.add(e.get("CRIUS_PLAN_HASH"))
    if g["tp_group"] != r["tp_group"]:
        errors.append(f"rank {r['rank']}: TP communicator {g['tp_group']} != layout {r['tp_group']}")
    if g["dp_group"] != r["dp_group"]:
        errors.append(f"rank {r['rank']}: DP communicator {g['dp_group']} != layout {r['dp_group']}")
    want_pp = r["pp_group"] if equal else []
    if g["pp_group"] != want_pp:
        errors.append(f"rank {r['rank']}: PP communicator {g['pp_group']} != {want_pp}")
    if g["tp_rank_sum"] != sum(r["tp_group"]):
        errors.append(f"rank {r['rank']}: TP all-reduce gave {g['tp_rank_sum']}, want {sum(r['tp_group'])}")
if len(hashes) != 1:
    errors.append(f"plan hashes differ: {hashes}")
for e in errors[:20]:
    print("  " + e)
sys.exit(1 if errors else 0)
PY
}
