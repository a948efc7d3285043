#!/usr/bin/env bash
# The main job: set up (idempotent), then run ctxprior's whole pipeline on the bundled demo data
# into demo.duckdb (a fresh warehouse each time) and print a summary; demo-output/ keeps any file of yours.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >/dev/null
. .venv/bin/activate
DB=${CTXPRIOR_DB:-demo.duckdb}
rm -f "$DB" "$DB.wal"
ctxprior --db "$DB" demo --overwrite "$@"  # replaces only the files an earlier demo recorded in --out
echo "warehouse: $DB   (try: ctxprior --db $DB info)"
