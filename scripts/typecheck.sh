#!/usr/bin/env bash
# Type check: mypy over src/ (pyproject.toml [tool.mypy]) against mypy-baseline.txt, a committed list
# of the errors allowed for now that only shrinks. Fails on an error not in the baseline, and on a
# baseline entry that is fixed (then: bash scripts/typecheck.sh --update, and commit the file).
# Run by scripts/test.sh after ruff (CTXPRIOR_LINT=0 skips both).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -n "${VIRTUAL_ENV:-}" ] || [ ! -d .venv ] || . .venv/bin/activate
exec python scripts/typecheck.py "$@"
