#!/usr/bin/env bash
# Creates the validation venv (default build/validation-venv) with tlparse and HolisticTraceAnalysis.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
venv="${1:-$root/build/validation-venv}"
if [[ ! -x "$venv/bin/python" ]]; then
  python3 -m venv "$venv"
fi
if ! cmp -s "$root/scripts/validation/requirements.txt" "$venv/.validation-requirements"; then
  "$venv/bin/pip" install -q -r "$root/scripts/validation/requirements.txt"
  cp "$root/scripts/validation/requirements.txt" "$venv/.validation-requirements"
fi
echo "$venv"
