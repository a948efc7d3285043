#!/usr/bin/env bash
# The wheels a bare CUDA machine (torch, transformers, numpy, pandas, pyarrow, scipy, click, tqdm,
# psutil; no internet) needs for the GPU check's end to end: the warehouse (duckdb, sqlalchemy,
# duckdb-engine) and pydantic with its three requirements (the image's transformers may not bring
# it), at the versions in constraints.txt, for that machine's Python (benchmarks/gpu_check.py's
# CARRIED: the same list). Run it where PyPI is reachable, then carry DIR along:
#   bash scripts/fetch-wheels.sh [DIR=.whl] [PYTHON_VERSION=3.12]
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${1:-.whl}; PYVER=${2:-3.12}
mkdir -p "$DIR"
for name in duckdb sqlalchemy duckdb-engine pydantic pydantic-core annotated-types typing-inspection; do
  # the pin for that Python (constraints.txt is one lock for every Python; markers pick the line)
  pin="$(python3 scripts/constraints.py pins --python "$PYVER" "$name")" || exit 2  # it said why
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version "$PYVER" --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 -d "$DIR" "$pin"
done
ls -l "$DIR"/*.whl
du -sh "$DIR"
