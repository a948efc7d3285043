#!/usr/bin/env bash
# Type check: mypy over src/ (pyproject.toml [tool.mypy]); every error fails.
# Run by scripts/test.sh after ruff (CTXPRIOR_LINT=0 skips both) and by the pre-commit hook.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -n "${VIRTUAL_ENV:-}" ] || [ ! -d .venv ] || . .venv/bin/activate
exec python -m mypy "$@"
