// Every TORCHSCOPE_* environment variable, declared once: its name, type, default, range and meaning. The
// collector, the CLI and the compiler read them through this table; the Python packages get the same table
// generated at build time (base/tools/SettingsPython.cpp writes `_settings.py` into the bridge's and the
// compiler's package); docs/collector.md's environment table is checked against it (tests/base/SettingsTest.cpp).
// Adding a setting: its constant below and its place in kAllSettings, plus its row in docs/collector.md.
//
// Error contract: nothing throws; a value that does not parse or is out of range reads as the default, with a
// one-line warning that names the variable, the value and what is used instead.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace torchscope::base {

enum class SettingType {
  kFlag,     // "0", "false", "off", "no" (any case) are false; any other non-empty value is true
  kInteger,  // a whole number in [minimum, maximum]
  kNumber,   // a decimal number in [minimum, maximum]
  kText,     // any text
  kPaths,    // ':'-separated folders or files
  kList,     // ','-separated entries
  kChoice,   // one of `choices` ('|'-separated)
};

struct Setting {
  std::string_view name;
  SettingType type = SettingType::kText;
  std::string_view default_value;  // as the variable would spell it; "" when unset means nothing is set
  double minimum = 0;              // kInteger, kNumber: the accepted range, both ends included
  double maximum = 0;
  std::string_view choices;  // kChoice
  std::string_view meaning;  // the row of docs/collector.md's environment table
};

namespace settings {

using enum SettingType;

inline constexpr Setting kOutput{
    "TORCHSCOPE_OUTPUT",
    kText,
    "",
    0,
    0,
    "",
    "the store of the job's first process (unset: `torchscope-<pid>.db`, made absolute); a directory or a path ending "
    "in `/` is a run folder (created; the first process writes `run.db` in it)"};
inline constexpr Setting kCollectives{
    "TORCHSCOPE_COLLECTIVES", kFlag, "1", 0, 0, "", "`0`: do not time torch.distributed collectives and DDP buckets"};
inline constexpr Setting kRegions{
    "TORCHSCOPE_REGIONS",
    kFlag,
    "1",
    0,
    0,
    "",
    "`0`: do not time the calls of what `torch.compile` returns (the compiled-region table, `advise --regions`)"};
inline constexpr Setting kSummary{"TORCHSCOPE_SUMMARY",
                                  kFlag,
                                  "1",
                                  0,
                                  0,
                                  "",
                                  "`0`: no one-line summary on stderr at exit (`run --no-summary` sets it)"};
inline constexpr Setting kVerbose{
    "TORCHSCOPE_VERBOSE",
    kFlag,
    "0",
    0,
    0,
    "",
    "`1`: print why GPU tracing is off (otherwise only stored as a diagnostic), and at exit what the store's queue "
    "held at its peak and how many calls waited for its lock"};
inline constexpr Setting kBufferMb{
    "TORCHSCOPE_BUFFER_MB",
    kInteger,
    "64",
    1,
    1048576,
    "",
    "the collector's memory budget for records not yet written, in MiB (see *Memory cap* below)"};
inline constexpr Setting kSignalWaitMs{
    "TORCHSCOPE_SIGNAL_WAIT_MS",
    kInteger,
    "3000",
    0,
    9999999,
    "",
    "how long a SIGTERM/SIGINT handler holds its thread for the store to close (0: not at all); the process dies by "
    "the signal at the latest twice this after it (see *Processes and stores*)"};
inline constexpr Setting kGpu{"TORCHSCOPE_GPU", kFlag, "1", 0, 0, "", "`0`: do not start GPU tracing"};
inline constexpr Setting kMemory{"TORCHSCOPE_MEMORY",
                                 kFlag,
                                 "1",
                                 0,
                                 0,
                                 "",
                                 "`0`: record no memory (no host RSS sampler, no allocator figures, no leak evidence)"};
inline constexpr Setting kMemorySampleMs{
    "TORCHSCOPE_MEMORY_SAMPLE_MS",
    kInteger,
    "20",
    1,
    3600000,
    "",
    "period of the host RSS sampler thread that finds each step's peak, and the least time between two step ends "
    "whose RSS is read"};
inline constexpr Setting kSampleHz{
    "TORCHSCOPE_SAMPLE_HZ",
    kInteger,
    "100",
    0,
    1000,
    "",
    "how many times a second the stack sampler reads every Python thread's stack (0 turns it off; `torchscope run "
    "--sample-hz N` sets it; a value that is not a whole number samples at 100 Hz and one above 1000 at 1000, with a "
    "warning in `diagnostics`; see *Stack sampler*)"};
inline constexpr Setting kSampleBudget{
    "TORCHSCOPE_SAMPLE_BUDGET",
    kNumber,
    "0.3",
    0,
    100,
    "",
    "the most of one core the stack sampler's thread may use, in per cent (0: no limit, the rate asked whatever it "
    "costs): while its ticks cost more, they are spread further apart than `TORCHSCOPE_SAMPLE_HZ` asks; a value out "
    "of range keeps 0.3, with a warning; see *Stack sampler*, *Its budget*"};
inline constexpr Setting kSampleReader{
    "TORCHSCOPE_SAMPLE_READER",
    kChoice,
    "direct",
    0,
    0,
    "direct|gil|compare",
    "how the stack sampler reads the stacks: `direct` (without the GIL on CPython 3.11, with it on any other "
    "version), `gil` (always with the GIL, for comparison), `compare` (for tests: every tick with the GIL, read both "
    "ways, the differences counted in `diagnostics`); another value reads directly, with a warning; see *Stack "
    "sampler*, *Reading without the GIL*"};
inline constexpr Setting kCensus{
    "TORCHSCOPE_CENSUS",
    kFlag,
    "1",
    0,
    0,
    "",
    "`0`: take no op census: by default a job that has compiled nothing by the end of its second step has its next "
    "step's aten ops counted, each timed and credited to the user's line that issued it (one `op_census` row with "
    "its `sites`, docs/FORMAT.md), for the `compile/not-compiled` rule; the counted step leaves the steady state"};
inline constexpr Setting kDisable{
    "TORCHSCOPE_DISABLE", kFlag, "0", 0, 0, "", "`1`: the library does nothing in this process"};
inline constexpr Setting kBridgeDir{
    "TORCHSCOPE_BRIDGE_DIR",
    kText,
    "",
    0,
    0,
    "",
    "where the Python bridge is (unset: `../share/torchscope/python` from the library's folder: in an install, a "
    "wheel's environment and the build tree, where it links to `collector/python`)"};
inline constexpr Setting kCollectorLibrary{
    "TORCHSCOPE_COLLECTOR_LIBRARY",
    kText,
    "",
    0,
    0,
    "",
    "the collector library: the bridge loads it when it was not preloaded, `torchscope` preloads it in place of "
    "`../lib/libtorchscope_collector.so` from its own folder"};
inline constexpr Setting kCuptiLibrary{
    "TORCHSCOPE_CUPTI_LIBRARY",
    kText,
    "",
    0,
    0,
    "",
    "the libcupti to load, before the loader's search path and the toolkit found at build time (see *GPU tracing*)"};
inline constexpr Setting kTorchImportHooks{
    "TORCHSCOPE_TORCH_IMPORT_HOOKS",
    kList,
    "",
    0,
    0,
    "",
    "comma-separated `module:function` entries the bridge calls, in order, as soon as the job has imported torch, in "
    "every traced Python process (a process that never imports torch, such as Inductor's `python -c` CPU-feature "
    "checks, pays nothing); a returned mapping is stored as run attributes, a failing hook is a diagnostic. "
    "`torchscope fix` names its runtime fixes' entry point here (`torchscope_compiler.runtime:on_torch_import`, "
    "which applies `TORCHSCOPE_FIXES`), and so does `torchscope run` when the environment has `TORCHSCOPE_FIXES`; "
    "the bridge knows nothing of the compiler"};
inline constexpr Setting kTorchImportPath{
    "TORCHSCOPE_TORCH_IMPORT_PATH",
    kPaths,
    "",
    0,
    0,
    "",
    "folders (`:`-separated) appended to `sys.path` before the hooks are imported: where the tool that named them "
    "keeps their modules (`torchscope run` gives the compiler's Python folder)"};
inline constexpr Setting kFixes{
    "TORCHSCOPE_FIXES",
    kList,
    "",
    0,
    0,
    "",
    "comma-separated runtime fixes (`id` or `id:arg`, docs/compiler.md) applied in every traced Python process once "
    "torch is imported: `torchscope fix` sets it for each variant it measures; under `torchscope run`, e.g. "
    "`TORCHSCOPE_FIXES=eager`, the job with compilation off"};
inline constexpr Setting kTestFixes{
    "TORCHSCOPE_TEST_FIXES",
    kFlag,
    "0",
    0,
    0,
    "",
    "`1`: `torchscope fix` offers the fixes that exist for its own tests (they change the job's results)"};
inline constexpr Setting kStatusLine{
    "TORCHSCOPE_STATUS_LINE",
    kFlag,
    "0",
    0,
    0,
    "",
    "`1`: the summary at exit first erases the terminal's current line (`torchscope run` sets it while it shows its "
    "status line there)"};
inline constexpr Setting kCommandLine{
    "TORCHSCOPE_COMMAND_LINE",
    kText,
    "",
    0,
    0,
    "",
    "the run's command line (`run.command_line`) in place of the first process's own: a launcher that wraps the "
    "user's command sets it to what the user typed (`torchscope fix` does, around `torchscope_compiler.launch`); "
    "other processes keep their own"};
inline constexpr Setting kWindowSteps{"TORCHSCOPE_WINDOW_STEPS",
                                      kText,
                                      "",
                                      0,
                                      0,
                                      "",
                                      "`A:B`: keep steps A to B-1 only (`A:` to the end); see *Capture window*"};
inline constexpr Setting kWindowDelayS{
    "TORCHSCOPE_WINDOW_DELAY_S",
    kNumber,
    "",
    0,
    1e9,
    "",
    "keep what happens from this many seconds after the process started (with `TORCHSCOPE_WINDOW_DURATION_S`, for "
    "that long; alone, to the end)"};
inline constexpr Setting kWindowDurationS{
    "TORCHSCOPE_WINDOW_DURATION_S",
    kNumber,
    "",
    0,
    1e9,
    "",
    "keep what happens for this many seconds (from `TORCHSCOPE_WINDOW_DELAY_S`, else from the start)"};
inline constexpr Setting kWindowCaptureRange{
    "TORCHSCOPE_WINDOW_CAPTURE_RANGE",
    kChoice,
    "",
    0,
    0,
    "cuda-profiler",
    "`cuda-profiler`: keep what happens between the job's `cudaProfilerStart()` and `cudaProfilerStop()` "
    "(`torch.cuda.profiler.start()/stop()`)"};
inline constexpr Setting kWindowSignal{
    "TORCHSCOPE_WINDOW_SIGNAL",
    kFlag,
    "0",
    0,
    0,
    "",
    "`1`: start with the window closed; each SIGUSR2 to the process opens or closes it"};
inline constexpr Setting kUserCode{
    "TORCHSCOPE_USER_CODE",
    kPaths,
    "",
    0,
    0,
    "",
    "`:`-separated directories whose files count as the user's code besides the job's folder and editable installs "
    "(`torchscope advise` reads it too)"};
inline constexpr Setting kPython{
    "TORCHSCOPE_PYTHON",
    kText,
    "",
    0,
    0,
    "",
    "the Python `torchscope demo`, `fix`'s source rewrites and `optimize` run (unset: the `python3` beside "
    "`torchscope`, a virtual environment's, else `python3` on `PATH`)"};
inline constexpr Setting kRootPid{
    "TORCHSCOPE_ROOT_PID",
    kInteger,
    "",
    1,
    4194304,
    "",
    "set by the collector: the pid of the job's first traced process, which writes the store `TORCHSCOPE_OUTPUT` "
    "names (`torchscope run` clears it, so a job it starts is a job of its own)"};
inline constexpr Setting kSavedPythonPath{
    "TORCHSCOPE_SAVED_PYTHONPATH",
    kText,
    "",
    0,
    0,
    "",
    "set by the collector: the job's own `PYTHONPATH` before the bridge's folder was put in front of it; the bridge "
    "gives it back to the job at start-up"};

// The table, in docs/collector.md's order.
inline constexpr const Setting* kAllSettings[] = {&kOutput,
                                                  &kCollectives,
                                                  &kRegions,
                                                  &kSummary,
                                                  &kVerbose,
                                                  &kBufferMb,
                                                  &kSignalWaitMs,
                                                  &kGpu,
                                                  &kMemory,
                                                  &kMemorySampleMs,
                                                  &kSampleHz,
                                                  &kSampleBudget,
                                                  &kSampleReader,
                                                  &kCensus,
                                                  &kDisable,
                                                  &kBridgeDir,
                                                  &kCollectorLibrary,
                                                  &kCuptiLibrary,
                                                  &kTorchImportHooks,
                                                  &kTorchImportPath,
                                                  &kFixes,
                                                  &kTestFixes,
                                                  &kStatusLine,
                                                  &kCommandLine,
                                                  &kWindowSteps,
                                                  &kWindowDelayS,
                                                  &kWindowDurationS,
                                                  &kWindowCaptureRange,
                                                  &kWindowSignal,
                                                  &kUserCode,
                                                  &kPython,
                                                  &kRootPid,
                                                  &kSavedPythonPath};

}  // namespace settings

// A value read from the environment: the default when unset, or when the text is not of the setting's type or
// range (`warning` then says so; empty otherwise).
template <typename T>
struct SettingValue {
  T value{};
  std::string warning;
  bool set = false;  // the variable was set and not empty
};

// The parsers, on a value given as text ("" is unset).
[[nodiscard]] SettingValue<bool> parseFlag(const Setting& setting, std::string_view text);
[[nodiscard]] SettingValue<std::int64_t> parseInteger(const Setting& setting, std::string_view text);
[[nodiscard]] SettingValue<double> parseNumber(const Setting& setting, std::string_view text);
[[nodiscard]] SettingValue<std::string> parseChoice(const Setting& setting, std::string_view text);

// The same on this process's environment.
[[nodiscard]] std::string settingText(const Setting& setting);  // the value, or the default when unset or empty
[[nodiscard]] bool settingIsSet(const Setting& setting);        // set and not empty
[[nodiscard]] SettingValue<bool> readFlag(const Setting& setting);
[[nodiscard]] SettingValue<std::int64_t> readInteger(const Setting& setting);
[[nodiscard]] SettingValue<double> readNumber(const Setting& setting);
[[nodiscard]] SettingValue<std::string> readChoice(const Setting& setting);
[[nodiscard]] std::vector<std::string> readEntries(const Setting& setting);  // kPaths, kList: the non-empty entries

// docs/collector.md's type column: "flag", "whole number from 1 to 1048576", "one of direct, gil, compare", ...
[[nodiscard]] std::string describeType(const Setting& setting);

}  // namespace torchscope::base
