#!/usr/bin/env bash
# The test command: set up (idempotent) and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
# DuckDB 2's nanobind bindings list "leaked" objects when a Python process that used it exits
# (pytest itself and the CLI subprocesses the tests start); drop those lines so pytest's summary
# stays the last thing printed. pipefail keeps pytest's exit code.
python -m pytest -q "$@" 2>&1 | grep --line-buffered -v -E '^( - leaked | - \.\.\. skipped remainder|nanobind: |See https://nanobind)'
