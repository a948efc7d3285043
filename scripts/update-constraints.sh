#!/usr/bin/env bash
# Move constraints.txt to the newest releases pyproject.toml allows, once the suite passes with them:
#   bash scripts/update-constraints.sh          (then review `git diff constraints.txt` and commit)
# It rebuilds .venv with CTXPRIOR_LATEST=1, runs scripts/test.sh, and only then rewrites the file.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .venv
CTXPRIOR_LATEST=1 bash scripts/test.sh "$@"
. .venv/bin/activate
py="$(python -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
{
  echo "# Tested versions of everything scripts/setup.sh installs (torch aside: scripts/torch-spec.sh"
  echo "# chooses it), made by scripts/update-constraints.sh on Python $py after the suite passed."
  echo "# setup.sh installs within these unless CTXPRIOR_LATEST=1 (the newest releases pyproject allows)."
  echo "# python $py"
  python -m pip freeze --exclude-editable | grep -v -i -E '^(torch|triton|nvidia-|ctxprior)([=<> @]|$)' | grep '=='
} > constraints.txt
echo "constraints.txt: $(grep -c '==' constraints.txt) pins on Python $py"
