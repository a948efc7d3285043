#!/usr/bin/env bash
# The GPU check (benchmarks/gpu_check.py) from a checkout, with the python3 that has torch:
#   bash scripts/gpu-check.sh [--out DIR] [--deadline 540] [--wheels .whl] [--smoke] ...
# Raw files (results.jsonl, log.txt, environment.json, gpu.json, gpu-synthetic.json, profile.json)
# go to --out, by default results/gpu/<UTC date>-<card>/ (commit it without scratch/: results/gpu/README.md).
# Offline; needs torch, transformers, numpy, pandas, pyarrow, and the wheels of
# scripts/fetch-wheels.sh in --wheels (default .whl) unless duckdb is installed. `--help` says more.
set -uo pipefail
cd "$(dirname "$0")/.."
exec "${PYTHON:-python3}" benchmarks/gpu_check.py "$@"
