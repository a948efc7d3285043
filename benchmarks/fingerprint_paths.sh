#!/usr/bin/env bash
# Fingerprints of the two end-to-end paths, for refactors that must not change a number:
#   bash benchmarks/fingerprint_paths.sh OUT_DIR [SHARED_DATA_DIR]
# runs the demo (`ctxprior demo`) and the DynamicQA path (ingest, sample-dynamic, score,
# score-dynamic, analyze-dynamic) into fresh warehouses under OUT_DIR and writes
# OUT_DIR/demo.fp and OUT_DIR/dynamicqa.fp (benchmarks/score_fingerprint.py). Run it on two
# checkouts and `diff` the .fp files. Uses the `ctxprior` on PATH (the checkout's .venv).
set -euo pipefail
OUT=${1:?usage: fingerprint_paths.sh OUT_DIR [SHARED_DATA_DIR]}
DATA=${2:-../shared/data/dynamicqa}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
rm -f "$OUT"/demo.duckdb* "$OUT"/dq.duckdb*
ctxprior --db "$OUT/demo.duckdb" demo --out "$OUT/demo-output" >"$OUT/demo.log" 2>&1
python "$HERE/score_fingerprint.py" "$OUT/demo.duckdb" >"$OUT/demo.fp"
C="ctxprior --db $OUT/dq.duckdb"
{
  $C ingest dynamicqa "$DATA"
  $C sample-dynamic --limit 3
  $C score --sample 1 --estimator first-token --query-types open
  $C score-dynamic --limit 3 --samples 4 --max-new-tokens 12
  $C analyze-dynamic
} >"$OUT/dq.log" 2>&1
python "$HERE/score_fingerprint.py" "$OUT/dq.duckdb" >"$OUT/dynamicqa.fp"
cat "$OUT/demo.fp" "$OUT/dynamicqa.fp"
