#!/usr/bin/env bash
# Every mutant still applies to the source as it is: a refactor that moves
# the code a patch changes leaves the patch behind, and `scripts/soak
# --mutant NAME` then fails to build instead of showing the checker
# catches the defect (four had rotted so before this test). Applying is
# cheap; whether each mutant is caught is soak's job (README.md here).
# Usage: apply-check.sh SOURCE_ROOT
set -uo pipefail
src=$1 rc=0
command -v patch > /dev/null || { echo "patch not found (scripts/setup installs it)"; exit 1; }
for p in "$src"/tests/history/mutants/*.patch; do
  if ! out=$(patch -p1 --dry-run --force -s -d "$src" < "$p" 2>&1); then
    echo "$(basename "$p" .patch): no longer applies: $out"
    rc=1
  fi
done
exit $rc
