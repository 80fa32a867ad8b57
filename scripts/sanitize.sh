#!/usr/bin/env bash
# Builds the sanitizer presets with only the libraries and test programs they run, then runs
# those tests (scripts/test.sh calls it after the dev suite; docs/reliability.md has the cost).
#   asan (clang, ASan+UBSan): store, collector, CUPTI decoder, interop and analyzer tests, and the
#        fuzz targets over their regression corpora, then a fixed number of runs, and the campaign
#        driver (scripts/fuzz_campaign.py) for a few CPU-seconds of the CUPTI target;
#   tsan (gcc, ThreadSanitizer): the store and collector tests (writer threads, the collector
#        library under concurrent callers and a fork, the queue's memory budget under two producers).
# Usage: scripts/sanitize.sh [asan|tsan]...   (default: both)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
jobs="$(nproc 2>/dev/null || echo 2)"
source "$root/scripts/ccache.sh"

# Python-only tests of the collector's bridge run no instrumented code; jobs under the collector
# (labels torch, slow, fault) need an instrumented interpreter and stay in the dev suite, and so does the Dask
# driver's test (label dask), which runs the torchscope command and bench_ranks that these presets do not build.
not_native='^collector_(bridge_|torch_versions)'
# The two largest Kineto traces (1.5-1.8 MB compressed) take minutes each under ASan on a busy
# 2-core machine, past the interop tests' timeout; the other corpus traces and fuzz_kineto cover
# the same importer under asan. CorpusHta imports every corpus trace, those two included, in one test (300 s
# timeout: it ran past it under asan on the loaded machine).
too_slow_for_asan='kineto_trace_diff_|^CorpusHta\.'
# A behaviour that rests on timing (the writer leaves WAL mode in a gap between a reader's looks): ThreadSanitizer
# slows SQLite's locking so much that the writer's half second of retries misses every gap in about one run of six;
# the dev and asan builds test it, and tsan the writer's threads in every other Writer test.
timing_bound_for_tsan='^Writer\.ClosesToOneFileWhileAReaderKeepsLooking$'

run_preset() {
  local preset="$1" labels="$2" excluded="$3"
  shift 3
  local started=$SECONDS
  # Re-run every time (cheap) so that a build folder configured otherwise gets these switches.
  cmake --preset "$preset" -DTORCHSCOPE_WITH_GUI=OFF -DTORCHSCOPE_WITH_CUDA_SAMPLES=OFF >/dev/null
  cmake --build "build/$preset" -j "$jobs" --target "$@"
  local built=$SECONDS
  ctest --test-dir "build/$preset" --output-on-failure -j "$jobs" --no-tests=error \
    -L "$labels" -LE '^(torch|slow|fault|cli|gpu|libtorch|dask)$' -E "$excluded"
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
      run_preset asan '^(base|store|collector|cupti|interop|analyzer|fuzz)$' "$not_native|$too_slow_for_asan" \
        base_tests store_tests collector_unit_tests collector_threads_test collector_cap_test cupti_decoder_tests cupti_tracer_tests \
        interop_tests analyzer_test analyzer_timeline_test analyzer_corpus_test \
        fuzz_torch_trace fuzz_kineto fuzz_input_file fuzz_store_export cupti_buffer_fuzz store_reader_fuzz
      ;;
    tsan)
      run_preset tsan '^(store|collector)$' "$not_native|$timing_bound_for_tsan" store_tests collector_unit_tests collector_threads_test \
        collector_cap_test
      ;;
    *)
      echo "sanitize: unknown preset $preset (asan or tsan)" >&2
      exit 2
      ;;
  esac
done
