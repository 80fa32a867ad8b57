#!/usr/bin/env bash
# Builds the sanitizer presets with only the libraries and test programs they run, then runs
# those tests (scripts/test.sh calls it after the dev suite; docs/reliability.md has the cost).
#   asan (clang, ASan+UBSan): store, collector, CUPTI decoder, interop and analyzer tests, and the
#        fuzz targets for a fixed number of runs from the seed corpora;
#   tsan (gcc, ThreadSanitizer): the store and collector tests (writer threads, fork, signals).
# Usage: scripts/sanitize.sh [asan|tsan]...   (default: both)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
jobs="$(nproc 2>/dev/null || echo 2)"
if command -v ccache >/dev/null 2>&1; then
  export CMAKE_C_COMPILER_LAUNCHER="${CMAKE_C_COMPILER_LAUNCHER:-ccache}"
  export CMAKE_CXX_COMPILER_LAUNCHER="${CMAKE_CXX_COMPILER_LAUNCHER:-ccache}"
fi

# Python-only tests of the collector's bridge run no instrumented code; jobs under the collector
# (labels torch, slow, fault) need an instrumented interpreter and stay in the dev suite.
not_native='^collector_(bridge_parse|torch_versions)'

run_preset() {
  local preset="$1" labels="$2"
  shift 2
  local started=$SECONDS
  if [[ ! -f "build/$preset/build.ninja" ]]; then
    cmake --preset "$preset" -DTORCHSCOPE_WITH_GUI=OFF >/dev/null
  fi
  cmake --build "build/$preset" -j "$jobs" --target "$@"
  local built=$SECONDS
  ctest --test-dir "build/$preset" --output-on-failure -j "$jobs" --no-tests=error \
    -L "$labels" -LE '^(torch|slow|fault|cli)$' -E "$not_native"
  echo "sanitize: $preset built in $((built - started)) s, tested in $((SECONDS - built)) s"
}

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1"

presets=("$@")
((${#presets[@]})) || presets=(asan tsan)
for preset in "${presets[@]}"; do
  case "$preset" in
    asan)
      run_preset asan '^(store|collector|cupti|interop|analyzer|fuzz)$' \
        store_tests collector_unit_tests cupti_decoder_tests cupti_tracer_tests interop_tests analyzer_test \
        analyzer_timeline_test fuzz_torch_trace fuzz_kineto cupti_buffer_fuzz store_reader_fuzz
      ;;
    tsan)
      run_preset tsan '^(store|collector)$' store_tests collector_unit_tests
      ;;
    *)
      echo "sanitize: unknown preset $preset (asan or tsan)" >&2
      exit 2
      ;;
  esac
done
