#!/usr/bin/env bash
# Checks or formats the C++ lines changed since the format rules last changed (.clang-format's last commit),
# committed or not: `scripts/format.sh check` lists what clang-format would change and exits 1 when anything;
# `scripts/format.sh fix` applies it to the working tree. Only changed lines are touched (git-clang-format).
# Exit 77 (skipped) outside a git checkout or without clang-format.
set -euo pipefail
mode="${1:-check}"
[[ "$mode" == check || "$mode" == fix ]] || { echo "format: unknown mode '$mode' (check or fix)" >&2; exit 2; }
cd "$(dirname "${BASH_SOURCE[0]}")/.."
git_clang_format="$(command -v git-clang-format-14 || command -v git-clang-format || true)"
clang_format="$(command -v clang-format-14 || command -v clang-format || true)"
if [[ -z "$git_clang_format" || -z "$clang_format" ]]; then
  echo "format: clang-format is not installed (scripts/bootstrap.sh all installs it)" >&2
  exit 77
fi
if ! base="$(git log -1 --format=%H -- .clang-format 2>/dev/null)" || [[ -z "$base" ]]; then
  echo "format: not a git checkout with a committed .clang-format; nothing to compare with" >&2
  exit 77
fi
# Bench and tests are C++ too; fuzz corpora and generated files are not sources.
paths=(':(glob)**/*.cpp' ':(glob)**/*.h')
if [[ "$mode" == fix ]]; then
  "$git_clang_format" --binary "$clang_format" --force "$base" -- "${paths[@]}" || true
  exit 0
fi
diff="$("$git_clang_format" --binary "$clang_format" --diff "$base" -- "${paths[@]}" || true)"
if [[ -z "$diff" || "$diff" == "no modified files to format" || "$diff" == *"did not modify any files"* ]]; then
  echo "format: the changed lines follow .clang-format"
  exit 0
fi
printf '%s\n' "$diff"
echo "format: the lines above do not follow .clang-format; run scripts/format.sh fix" >&2
exit 1
