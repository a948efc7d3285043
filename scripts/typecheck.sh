#!/usr/bin/env bash
# The type checker over src/ (a placeholder the type-checking step finishes): mypy against the
# committed baseline scripts/mypy-baseline.txt when both exist, else it says what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -f scripts/typecheck.py ]; then
  exec python scripts/typecheck.py "$@"
fi
if ! python -m mypy --version >/dev/null 2>&1; then
  echo "typecheck: mypy is not installed; skipped (pip install mypy)"
  exit 0
fi
if [ -f scripts/mypy-baseline.txt ]; then
  # only errors not in the baseline fail
  new="$(python -m mypy src/ctxprior 2>/dev/null | grep -E ': error:' | sed -E 's/:[0-9]+:/:/' | sort | comm -23 - <(sed -E 's/:[0-9]+:/:/' scripts/mypy-baseline.txt | sort) || true)"
  if [ -n "$new" ]; then
    echo "$new"
    echo "typecheck: mypy errors not in scripts/mypy-baseline.txt (above)"
    exit 1
  fi
  echo "typecheck: no mypy errors beyond the baseline"
else
  n="$(python -m mypy src/ctxprior 2>/dev/null | grep -cE ': error:' || true)"
  echo "typecheck: mypy finds $n errors in src/; no scripts/mypy-baseline.txt yet, so nothing fails"
fi
