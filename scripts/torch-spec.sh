#!/usr/bin/env bash
# Which PyTorch build scripts/setup.sh installs. Prints two lines: the pip requirement, then why.
#   an NVIDIA GPU (nvidia-smi lists one)  -> torch>=2.4 from PyPI (its Linux wheels are CUDA builds)
#   no NVIDIA GPU                         -> torch==2.13.0 (the CPU build our machines carry)
# CTXPRIOR_TORCH=cpu|cuda overrides the detection; CTXPRIOR_TORCH=skip keeps the torch you have.
set -euo pipefail
choice="${CTXPRIOR_TORCH:-auto}"
gpu=""
if [ "$choice" = auto ] || [ "$choice" = cuda ]; then
  if command -v nvidia-smi >/dev/null 2>&1 && gpu="$(nvidia-smi -L 2>/dev/null | head -n 1)" && [ -n "$gpu" ]; then
    [ "$choice" = auto ] && choice=cuda
  else
    gpu=""
    [ "$choice" = auto ] && choice=cpu
  fi
fi
case "$choice" in
  cuda) echo "torch>=2.4"; echo "a CUDA build of torch: ${gpu:-CTXPRIOR_TORCH=cuda (no GPU listed by nvidia-smi)}" ;;
  cpu)  echo "torch==2.13.0"; echo "the CPU build of torch: no NVIDIA GPU found (nvidia-smi lists none)" ;;
  skip) echo ""; echo "the torch already installed (CTXPRIOR_TORCH=skip)" ;;
  *)    echo "CTXPRIOR_TORCH=$choice: use cpu, cuda or skip" >&2; exit 2 ;;
esac
