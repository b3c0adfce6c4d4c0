#!/usr/bin/env bash
# One-GPU check: `ldpjax bench --size paper` and `ldpjax reproduce --size paper` (every
# registered experiment of the three papers) within one wall-clock budget (default 10 minutes
# in all), results as JSON under $OUT.
#
#   OUT=/some/folder bash experiments/gpu_check.sh
#
# Writes:
#   $OUT/env.json            jax version, backend, devices (and nvidia-smi's line if present)
#   $OUT/plan.json           `ldpjax bench --plan --size paper --lower-only`: the chunk plan of
#                            every bench workload on these devices (bytes per chunk, fits)
#   $OUT/bench.json          `ldpjax bench --size paper` records, default generator
#   $OUT/bench_fast.json     the same with `--rng fast`
#   $OUT/reproduce/          `ldpjax reproduce --size paper` output folders (run.json each,
#                            reproduce.json with the verdicts)
#   $OUT/gpu_check.json      exit code, wall seconds, time limit and timed_out of every part
#   $OUT/*.log               stdout + stderr of every part
# Time limits (seconds, override by environment): TOTAL_S=600 for the whole script, and per
# part PLAN_S=60 BENCH_S=140 FAST_S=100 REPRODUCE_S=270; a part never gets more than what is
# left of TOTAL_S (minus 20 s for the kill grace and the summary), so the script ends within
# TOTAL_S. The bench parts use --repeats 1: the NumPy side of the paper sizes alone takes
# ~1-2 min. A part that hits its limit is recorded with rc 124 (the bench rewrites its JSON
# after every workload, so finished workloads are kept) and the script goes on; it exits 0 if
# every part finished with rc 0, 1 otherwise, 2 if the CLI lacks an option used here. Nothing
# here is specific to a GPU: on a machine without one it runs (slowly) on the CPU.
set -u

START=$(date +%s)
PY=${PYTHON:-python}
OUT=${OUT:-results/gpu_check}
TOTAL_S=${TOTAL_S:-600}
PLAN_S=${PLAN_S:-60}
BENCH_S=${BENCH_S:-140}
FAST_S=${FAST_S:-100}
REPRODUCE_S=${REPRODUCE_S:-270}
mkdir -p "$OUT"

if command -v ldpjax >/dev/null 2>&1 && ldpjax bench --help >/dev/null 2>&1; then
  BENCH=(ldpjax bench)
else
  BENCH=("$PY" -m ldpjax_experiments.bench)
fi
if command -v ldpjax >/dev/null 2>&1; then
  LDPJAX=(ldpjax)
else
  LDPJAX=("$PY" -m ldpjax_experiments.cli)
fi

# Fail early (exit 2) when an option this script passes is missing from the CLI.
BENCH_HELP=$("${BENCH[@]}" --help 2>&1)
REPRODUCE_HELP=$("${LDPJAX[@]}" reproduce --help 2>&1)
for flag in --size --repeats --rng --json --plan --lower-only; do
  grep -q -- "$flag" <<<"$BENCH_HELP" || { echo "[gpu_check] ldpjax bench has no $flag" >&2; exit 2; }
done
for flag in --size --out --no-progress; do
  grep -q -- "$flag" <<<"$REPRODUCE_HELP" || { echo "[gpu_check] ldpjax reproduce has no $flag" >&2; exit 2; }
done

"$PY" - "$OUT/env.json" <<'EOF'
import json, shutil, subprocess, sys
import jax
env = {"jax": jax.__version__, "backend": jax.default_backend(),
       "devices": [f"{d.platform}:{d.device_kind}" for d in jax.devices()]}
try:
    env["memory_stats"] = jax.devices()[0].memory_stats()
except Exception:  # noqa: BLE001 -- backends without memory stats
    pass
if shutil.which("nvidia-smi"):
    env["nvidia_smi"] = subprocess.run(
        ["nvidia-smi", "--query-gpu=name,memory.total,driver_version", "--format=csv,noheader"],
        capture_output=True, text=True).stdout.strip()
json.dump(env, open(sys.argv[1], "w"), indent=2, default=str)
print(env)
EOF

PARTS=()
part() {  # part NAME LIMIT_S CMD...
  local name=$1 limit=$2; shift 2
  local start end rc left
  left=$(( START + TOTAL_S - 20 - $(date +%s) ))
  if (( left < limit )); then limit=$left; fi
  if (( limit < 1 )); then
    PARTS+=("$name 124 0 $(date +%s.%N) $(date +%s.%N)")
    echo "[gpu_check] $name: skipped (no time left of TOTAL_S=$TOTAL_S)"
    return
  fi
  start=$(date +%s.%N)
  timeout --signal=INT --kill-after=10 "$limit" "$@" >"$OUT/$name.log" 2>&1
  rc=$?
  end=$(date +%s.%N)
  PARTS+=("$name $rc $limit $start $end")
  echo "[gpu_check] $name: rc=$rc ($(echo "$end - $start" | bc) s of $limit s)"
}

part plan "$PLAN_S" "${BENCH[@]}" --plan --lower-only --size paper --json "$OUT/plan.json"
part bench "$BENCH_S" "${BENCH[@]}" --size paper --repeats 1 --json "$OUT/bench.json"
part bench_fast "$FAST_S" "${BENCH[@]}" --size paper --repeats 1 --rng fast --json "$OUT/bench_fast.json"
part reproduce "$REPRODUCE_S" "${LDPJAX[@]}" reproduce --size paper --out "$OUT/reproduce" --no-progress

printf '%s\n' "${PARTS[@]}" | "$PY" -c '
import json, sys
parts = []
for line in sys.stdin:
    name, rc, limit, start, end = line.split()
    parts.append({"part": name, "rc": int(rc), "limit_seconds": float(limit),
                  "wall_seconds": round(float(end) - float(start), 2),
                  "timed_out": int(rc) in (124, 137), "skipped": float(limit) == 0})
out = sys.argv[1]
json.dump({"parts": parts, "ok": all(p["rc"] == 0 for p in parts),
           "total_limit_seconds": float(sys.argv[2])}, open(out, "w"), indent=2)
print(json.dumps(parts, indent=1))
sys.exit(0 if all(p["rc"] == 0 for p in parts) else 1)
' "$OUT/gpu_check.json" "$TOTAL_S"
