#!/usr/bin/env bash
# One-GPU check (issue 10, item 7): `ldpjax bench` and `ldpjax reproduce --size paper` within a
# fixed wall-clock budget (default 10 minutes in all), results as JSON under $OUT.
#
#   OUT=/some/folder bash experiments/gpu_check.sh
#
# Writes:
#   $OUT/env.json            jax version, backend, devices (and nvidia-smi's line if present)
#   $OUT/bench.json          `ldpjax bench --size paper` records, default generator
#   $OUT/bench_fast.json     the same with `--rng fast`
#   $OUT/reproduce/          `ldpjax reproduce --size paper` output folders (run.json each)
#   $OUT/gpu_check.json      exit code, wall seconds and time limit of every part
#   $OUT/*.log               stdout + stderr of every part
# Time limits (seconds, override by environment): BENCH_S=150 FAST_S=120 REPRODUCE_S=300
# (the bench parts use --repeats 1: the NumPy side of the paper sizes alone takes ~1-2 min).
# A part that hits its limit is recorded with rc 124 and the script goes on; the script itself
# exits 0 if every part finished with rc 0, else 1. Nothing here is specific to a GPU: on a
# machine without one it runs (slowly) on the CPU.
set -u

PY=${PYTHON:-python}
OUT=${OUT:-results/gpu_check}
BENCH_S=${BENCH_S:-150}
FAST_S=${FAST_S:-120}
REPRODUCE_S=${REPRODUCE_S:-300}
mkdir -p "$OUT"

if command -v ldpjax >/dev/null 2>&1 && ldpjax bench --help >/dev/null 2>&1; then
  BENCH=(ldpjax bench)
else
  BENCH=("$PY" -m ldpjax.bench)
fi
if command -v ldpjax >/dev/null 2>&1; then
  LDPJAX=(ldpjax)
else
  LDPJAX=("$PY" -m ldpjax.cli)
fi

"$PY" - "$OUT/env.json" <<'EOF'
import json, shutil, subprocess, sys
import jax
env = {"jax": jax.__version__, "backend": jax.default_backend(),
       "devices": [f"{d.platform}:{d.device_kind}" for d in jax.devices()]}
if shutil.which("nvidia-smi"):
    env["nvidia_smi"] = subprocess.run(
        ["nvidia-smi", "--query-gpu=name,memory.total,driver_version", "--format=csv,noheader"],
        capture_output=True, text=True).stdout.strip()
json.dump(env, open(sys.argv[1], "w"), indent=2)
print(env)
EOF

PARTS=()
part() {  # part NAME LIMIT_S CMD...
  local name=$1 limit=$2; shift 2
  local start end rc
  start=$(date +%s.%N)
  timeout --signal=INT --kill-after=15 "$limit" "$@" >"$OUT/$name.log" 2>&1
  rc=$?
  end=$(date +%s.%N)
  PARTS+=("$name $rc $limit $start $end")
  echo "[gpu_check] $name: rc=$rc ($(echo "$end - $start" | bc) s of $limit s)"
}

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
                  "timed_out": int(rc) in (124, 137)})
out = sys.argv[1]
json.dump({"parts": parts, "ok": all(p["rc"] == 0 for p in parts)}, open(out, "w"), indent=2)
print(json.dumps(parts, indent=1))
sys.exit(0 if all(p["rc"] == 0 for p in parts) else 1)
' "$OUT/gpu_check.json"
