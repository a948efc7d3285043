#!/usr/bin/env bash
# The main job: set up (idempotent), then run ctxprior's whole pipeline on the bundled demo data
# into demo.duckdb (a fresh warehouse each time) and print a summary; demo-output/ keeps any file of yours.
set -euo pipefail
cd "$(dirname "$0")/.."
# set-up's own output (pip's, and warnings from this machine's pip configuration) is shown only
# when set-up fails, so the demo prints ctxprior's lines alone
setup_log="$(mktemp)"
bash scripts/setup.sh >"$setup_log" 2>&1 || { cat "$setup_log" >&2; rm -f "$setup_log"; echo "demo: set-up failed (above)" >&2; exit 1; }
rm -f "$setup_log"
. .venv/bin/activate
DB=${CTXPRIOR_DB:-demo.duckdb}
rm -f "$DB" "$DB.wal"
ctxprior --db "$DB" demo --overwrite "$@"  # replaces only the files an earlier demo recorded in --out
echo "warehouse: $DB   (try: ctxprior --db $DB info)"
