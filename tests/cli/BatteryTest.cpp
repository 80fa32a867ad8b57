// The hostile-input battery: every command of the real `torchscope` binary, run as a subprocess on files and
// arguments built to break it (an output naming an input, devices, FIFOs, symlink loops, damaged stores, gzip
// files cut short or inflating past the limits, JSON nested tens of thousands of levels deep, NaN options, a full
// or closed standard output). Each case asserts its outcome class: the exit code, a message naming the cause, no
// signal, no hang, and the bytes of every input (and of an output that must survive) unchanged.
// docs/reliability.md (*Hostile input*) counts the cases.
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "torchscope/store/Writer.h"
#include "torchscope/testing/Paths.h"
#include "torchscope/testing/Subprocess.h"
#include "torchscope/testing/TempDir.h"

namespace torchscope {
namespace {

namespace fs = std::filesystem;

constexpr int kOk = 0;
constexpr int kFailure = 1;
constexpr int kUsage = 2;

std::string repeated(const std::string& text, std::size_t times) {
  std::string out;
  out.reserve(text.size() * times);
  for (std::size_t i = 0; i < times; ++i) out += text;
  return out;
}

// `[[[...]]]`, `depth` levels.
std::string nested(std::size_t depth) { return repeated("[", depth) + repeated("]", depth); }

void writeText(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

// Writes `size` bytes made by `chunk(i)` through gzip, without holding them in memory.
void writeGzip(const std::string& path, const std::function<std::string(std::size_t)>& chunk, std::size_t chunks) {
  gzFile file = gzopen(path.c_str(), "wb9");
  ASSERT_NE(file, nullptr);
  for (std::size_t i = 0; i < chunks; ++i) {
    const std::string data = chunk(i);
    ASSERT_EQ(gzwrite(file, data.data(), static_cast<unsigned>(data.size())), static_cast<int>(data.size()));
  }
  gzclose(file);
}

std::string kinetoEvent(int index, const std::string& args) {
  return "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::op" + std::to_string(index) +
         "\",\"pid\":1,\"tid\":1,\"ts\":" + std::to_string(10 * index) + ",\"dur\":5,\"args\":" + args + "}";
}

std::string kinetoTrace(int events) {
  std::string text = "{\"traceEvents\":[";
  for (int i = 0; i < events; ++i) text += (i > 0 ? "," : "") + kinetoEvent(i, "{\"External id\":" + std::to_string(i) + "}");
  return text + "]}";
}

void writeStore(const std::string& path, const std::string& deep_json = "") {
  auto writer = store::Writer::open(path);
  ASSERT_TRUE(writer) << writer.error().message;
  for (int step = 0; step < 4; ++step) {
    (*writer)->add(store::Step{1, 1, step, step * 1'000'000, step * 1'000'000 + 900'000, "marker"});
    store::Kernel kernel;
    kernel.pid = 1;
    kernel.start_ns = step * 1'000'000 + 100'000;
    kernel.end_ns = kernel.start_ns + 500'000;
    kernel.name = "kernel";
    (*writer)->add(kernel);
  }
  if (!deep_json.empty()) {
    store::CpuOp op;
    op.pid = 1;
    op.tid = 1;
    op.end_ns = 10;
    op.name = "aten::deep";
    op.category = "cpu_op";
    op.args = deep_json;
    (*writer)->add(op);
    store::GraphBreak graph_break;
    graph_break.pid = 1;
    graph_break.reason = "deep";
    graph_break.hints = deep_json;
    (*writer)->add(graph_break);
    store::Recompile recompile;
    recompile.pid = 1;
    recompile.guard_failures = deep_json;
    (*writer)->add(recompile);
    store::Device device;
    device.properties = deep_json;
    (*writer)->add(device);
  }
  ASSERT_TRUE((*writer)->close(5'000'000));
}

void runSql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* message = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message);
  const std::string error = message != nullptr ? message : "";
  sqlite3_free(message);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << error;
}

// Files a case may name as {name}; each is built in the case's own directory when the case names it.
const std::map<std::string, std::function<void(const fs::path& dir, const std::string& path)>>& assets() {
  static const std::map<std::string, std::function<void(const fs::path&, const std::string&)>> builders = {
      {"run.db", [](const fs::path&, const std::string& path) { writeStore(path); }},
      {"new.db", [](const fs::path&, const std::string& path) { writeStore(path); }},
      {"notes.txt", [](const fs::path&, const std::string& path) { writeText(path, "not a store\n"); }},
      {"empty.db", [](const fs::path&, const std::string& path) { writeText(path, ""); }},
      {"out.json", [](const fs::path&, const std::string& path) { writeText(path, "the user's own file\n"); }},
      {"trace.json", [](const fs::path&, const std::string& path) { writeText(path, kinetoTrace(20)); }},
      {"trace.json.gz",
       [](const fs::path&, const std::string& path) { writeGzip(path, [](std::size_t) { return kinetoTrace(20); }, 1); }},
      // A gzip file cut in half: the first half still inflates to a valid-looking start.
      {"truncated.json.gz",
       [](const fs::path& dir, const std::string& path) {
         const std::string whole = (dir / "whole.json.gz").string();
         writeGzip(whole, [](std::size_t) { return kinetoTrace(4000); }, 1);
         std::ifstream in(whole, std::ios::binary);
         const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
         writeText(path, bytes.substr(0, bytes.size() / 2));
         fs::remove(whole);
       }},
      // A TORCH_TRACE log that inflates to 640 MiB from a few hundred KiB: past the 512 MiB a log may have.
      {"bomb.log.gz",
       [](const fs::path&, const std::string& path) {
         const std::string line = "V1206 15:18:15.925000 1500233 torch/_dynamo/utils.py:1288] {\"str\": [\"x\", 0]}\n";
         const std::string block = repeated(std::string(1023, 'x') + "\n", 1024);
         writeGzip(path, [&](std::size_t i) { return i == 0 ? line : block; }, 641);
       }},
      // One JSON string of 20 MiB in a Kineto trace's args: past the 16 MiB a string may have.
      {"long-string.json.gz",
       [](const fs::path&, const std::string& path) {
         writeGzip(path,
                   [](std::size_t i) {
                     if (i == 0) return std::string("{\"traceEvents\":[{\"ph\":\"X\",\"args\":{\"s\":\"");
                     if (i == 21) return std::string("\"}}]}");
                     return std::string(1 << 20, 'a');
                   },
                   22);
       }},
      // args nested 1000 levels: cut at 256, the event kept, the cut counted.
      {"deep-args.json", [](const fs::path&, const std::string& path) {
         writeText(path, "{\"traceEvents\":[" + kinetoEvent(1, "{\"a\":" + nested(1000) + "}") + "]}");
       }},
      // args nested 60000 levels: past the 4096 a trace may have at all.
      {"too-deep.json", [](const fs::path&, const std::string& path) {
         writeText(path, "{\"traceEvents\":[" + kinetoEvent(1, "{\"a\":" + nested(60000) + "}") + "]}");
       }},
      // A store whose JSON columns (args, hints, guard failures, device properties) nest 60000 levels.
      {"deep.db", [](const fs::path&, const std::string& path) { writeStore(path, nested(60000)); }},
      // A store of this version that lost a table.
      {"damaged.db",
       [](const fs::path&, const std::string& path) {
         writeStore(path);
         runSql(path, "DROP TABLE kernels;");
       }},
      // A store cut short (a copy that stopped half way): its pages past the cut are gone.
      {"cut.db",
       [](const fs::path&, const std::string& path) {
         writeStore(path);
         fs::resize_file(path, fs::file_size(path) / 2);
       }},
      {"fifo", [](const fs::path&, const std::string& path) { ASSERT_EQ(mkfifo(path.c_str(), 0600), 0); }},
      // A device like /dev/null, made in the case's folder where we may (root): a torchscope that unlinks its
      // output then destroys this node, not the machine's /dev/null. Elsewhere a link to /dev/null, which a
      // user who is not root cannot remove.
      {"device", [](const fs::path&, const std::string& path) {
         if (mknod(path.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) fs::create_symlink("/dev/null", path);
       }},
      {"loop", [](const fs::path& dir, const std::string& path) {
         fs::create_symlink(dir / "loop2", path);
         fs::create_symlink(path, dir / "loop2");
       }},
      {"link.db", [](const fs::path& dir, const std::string& path) {
         if (!fs::exists(dir / "run.db")) writeStore((dir / "run.db").string());
         fs::create_symlink(dir / "run.db", path);
       }},
      {"hard.db", [](const fs::path& dir, const std::string& path) {
         if (!fs::exists(dir / "run.db")) writeStore((dir / "run.db").string());
         fs::create_hard_link(dir / "run.db", path);
       }},
      {"folder", [](const fs::path&, const std::string& path) { fs::create_directory(path); }},
      // A run folder with one store.
      {"rundir", [](const fs::path&, const std::string& path) {
         fs::create_directory(path);
         writeStore(path + "/run.rank0.1.db");
       }},
      {"readonly", [](const fs::path&, const std::string& path) {
         fs::create_directory(path);
         fs::permissions(path, fs::perms::owner_read | fs::perms::owner_exec);
       }},
  };
  return builders;
}

struct Case {
  Case(std::string case_name, std::string arguments, int code, std::string expected, std::vector<std::string> kept,
       std::string suffix = "")
      : name(std::move(case_name)),
        command(std::move(arguments)),
        exit_code(code),
        message(std::move(expected)),
        unchanged(std::move(kept)),
        shell_suffix(std::move(suffix)) {}

  std::string name;
  std::string command;  // arguments of `torchscope`, with {asset} for the path of an asset; run in the case's folder
  int exit_code = kOk;
  std::string message;  // a regular expression stderr must match; empty: anything
  std::vector<std::string> unchanged;  // assets whose bytes must be the same afterwards
  std::string shell_suffix;            // redirections after the command (stdout to /dev/full, ...)
};

std::ostream& operator<<(std::ostream& out, const Case& c) { return out << c.name; }

// One case a row: clang-format would give each field of a row its own line.
// clang-format off
const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      // 1. Outputs that name an input, or that are not regular files, are refused before anything is touched.
      {"export_over_its_store", "export {run.db} -o {run.db}", kUsage, "also an input", {"run.db"}},
      {"advise_over_its_store", "advise {run.db} -o {run.db}", kUsage, "also an input", {"run.db"}},
      {"import_over_its_trace", "import {trace.json} -o {trace.json}", kUsage, "also an input", {"trace.json"}},
      {"compare_over_its_baseline", "compare {run.db} {new.db} -o {run.db}", kUsage, "also an input", {"run.db", "new.db"}},
      {"compare_over_its_new_run", "compare {run.db} {new.db} -o {new.db}", kUsage, "also an input", {"run.db", "new.db"}},
      {"fix_over_its_store", "fix {run.db} -o {run.db}", kUsage, "also an input", {"run.db"}},
      {"advise_over_a_symlink_to_its_store", "advise {run.db} -o {link.db}", kUsage, "also an input", {"run.db"}},
      {"advise_over_a_hard_link_to_its_store", "advise {run.db} -o {hard.db}", kUsage, "also an input", {"run.db"}},
      {"export_over_its_store_by_another_path", "export {run.db} -o {folder}/../run.db", kUsage, "also an input",
       {"run.db"}},
      {"export_over_a_run_folder_store", "export {rundir} -o {rundir}/run.rank0.1.db", kUsage, "also an input", {}},
      {"run_over_its_own_script", "run -o {notes.txt} -- cat {notes.txt}", kUsage, "also an input", {"notes.txt"}},
      {"export_to_dev_null", "export {run.db} -o {device}", kUsage, "not a regular file", {"run.db"}},
      {"import_to_dev_null", "import {trace.json} -o {device}", kUsage, "not a regular file", {"trace.json"}},
      {"advise_to_dev_null", "advise {run.db} -o {device}", kUsage, "not a regular file", {"run.db"}},
      {"export_to_a_fifo", "export {run.db} -o {fifo}", kUsage, "not a regular file", {"run.db"}},
      {"export_to_a_directory", "export {run.db} -o {folder}", kUsage, "a directory", {"run.db"}},
      {"export_to_a_missing_directory", "export {run.db} -o missing/trace.json", kUsage, "directory does not exist",
       {"run.db"}},
      {"export_to_a_symlink_loop", "export {run.db} -o {loop}", kUsage, "loop of symbolic links", {"run.db"}},
      // 1. A command that fails leaves an existing output as it was.
      {"failed_export_keeps_the_output", "export {notes.txt} -o {out.json}", kUsage, "not a torchscope store",
       {"out.json", "notes.txt"}},
      {"failed_export_of_a_damaged_store_keeps_the_output", "export {damaged.db} -o {out.json}", kUsage,
       "damaged store", {"out.json"}},
      {"failed_advise_keeps_the_output", "advise {empty.db} -o {out.json}", kUsage, "not a torchscope store",
       {"out.json"}},
      {"failed_import_keeps_the_store", "import {notes.txt} -o {run.db}", kUsage, "neither a TORCH_TRACE log",
       {"run.db"}},
      {"failed_import_of_a_truncated_gzip_keeps_the_store", "import {truncated.json.gz} -o {run.db}", kUsage,
       "truncated gzip", {"run.db", "truncated.json.gz"}},
      {"export_to_an_unwritable_directory", "export {run.db} -o {readonly}/trace.json", kFailure,
       "cannot write \\(permission denied\\)", {"run.db"}},
      // 2. Inputs: non-regular files refused by every command alike, limits, truncated gzip.
      {"import_a_fifo", "import {fifo} -o x.db", kUsage, "not a regular file", {}},
      {"stats_a_fifo", "stats {fifo}", kUsage, "not a regular file", {}},
      {"export_a_fifo", "export {fifo}", kUsage, "not a regular file", {}},
      {"advise_a_fifo", "advise {fifo}", kUsage, "not a regular file", {}},
      {"compare_a_fifo", "compare {fifo} {run.db}", kUsage, "not a regular file", {"run.db"}},
      {"import_a_device", "import /dev/zero -o x.db", kUsage, "not a regular file", {}},
      {"stats_a_symlink_loop", "stats {loop}", kUsage, "loop of symbolic links", {}},
      {"import_a_symlink_loop", "import {loop} -o x.db", kUsage, "loop of symbolic links", {}},
      {"advise_a_missing_store", "advise missing.db", kUsage, "missing.db: no such file", {}},
      {"import_a_truncated_gzip", "import {truncated.json.gz} -o x.db", kUsage, "truncated gzip", {"truncated.json.gz"}},
      {"import_a_gzip_bomb", "import {bomb.log.gz} -o x.db", kUsage, "larger than 512 MiB once decompressed",
       {"bomb.log.gz"}},
      {"import_a_20_MiB_string", "import {long-string.json.gz} -o x.db", kUsage, "JSON string longer than 16 MiB",
       {"long-string.json.gz"}},
      {"import_args_nested_1000_levels", "import {deep-args.json} -o x.db", kOk, "1 deeply nested value",
       {"deep-args.json"}},
      {"import_args_nested_60000_levels", "import {too-deep.json} -o x.db", kUsage, "nested more than 4096 levels",
       {"too-deep.json"}},
      {"import_a_gzip_trace", "import {trace.json.gz} -o x.db", kOk, "imported 1 file", {"trace.json.gz"}},
      {"export_a_store_nested_60000_levels", "export {deep.db} -o x.json", kOk, "wrote", {"deep.db"}},
      {"advise_a_store_nested_60000_levels", "advise {deep.db} --format json -o x.json", kOk, "", {"deep.db"}},
      {"stats_a_store_nested_60000_levels", "stats {deep.db} --format json", kOk, "", {"deep.db"}},
      // 3. Numbers: NaN, infinities and values out of range, with the option named.
      {"compare_threshold_nan", "compare {run.db} {new.db} --threshold nan", kUsage, "--threshold", {}},
      {"compare_threshold_inf", "compare {run.db} {new.db} --threshold inf", kUsage, "--threshold", {}},
      {"compare_threshold_negative", "compare {run.db} {new.db} --threshold -1", kUsage, "--threshold", {}},
      {"compare_threshold_not_a_number", "compare {run.db} {new.db} --threshold fast", kUsage, "--threshold", {}},
      {"fix_min_impact_nan", "fix {run.db} --min-impact nan", kUsage, "--min-impact", {"run.db"}},
      {"fix_min_gain_inf", "fix {run.db} --min-gain inf", kUsage, "--min-gain", {"run.db"}},
      {"fix_max_memory_increase_nan", "fix {run.db} --max-memory-increase nan", kUsage, "--max-memory-increase",
       {"run.db"}},
      {"fix_parity_tolerance_minus_inf", "fix {run.db} --parity-tolerance -inf", kUsage, "--parity-tolerance",
       {"run.db"}},
      {"fix_repetitions_nan", "fix {run.db} --repetitions nan", kUsage, "--repetitions", {"run.db"}},
      {"fix_timeout_zero", "fix {run.db} --timeout 0", kUsage, "--timeout", {"run.db"}},
      {"fix_parallel_runs_huge", "fix {run.db} --parallel-runs 1e30", kUsage, "--parallel-runs", {"run.db"}},
      {"demo_repetitions_nan", "demo --repetitions nan", kUsage, "--repetitions", {}},
      {"demo_max_fixes_negative", "demo --max-fixes -1", kUsage, "--max-fixes", {}},
      {"optimize_rounds_nan", "optimize model.pt --input 1,3 --rounds nan", kUsage, "--rounds", {}},
      {"optimize_threads_inf", "optimize model.pt --input 1,3 --threads inf", kUsage, "--threads", {}},
      // 4. Writes checked: a full or closed standard output is an error; a reader that went away is not.
      {"stats_to_a_full_disk", "stats {run.db}", kFailure, "standard output: cannot write \\(No space left", {},
       " > /dev/full"},
      {"advise_to_a_full_disk", "advise {run.db}", kFailure, "standard output: cannot write", {}, " > /dev/full"},
      {"export_to_a_full_disk", "export {run.db}", kFailure, "standard output: cannot write", {}, " > /dev/full"},
      {"compare_to_a_full_disk", "compare {run.db} {new.db}", kFailure, "standard output: cannot write", {},
       " > /dev/full"},
      {"stats_to_a_closed_stdout", "stats {run.db}", kFailure, "standard output: cannot write", {}, " >&-"},
      // 5. The same bad store: the same exit code and message from every command, no SQL, the path once.
      {"stats_a_damaged_store", "stats {damaged.db}", kUsage, "damaged.db: .*damaged store", {"damaged.db"}},
      {"advise_a_damaged_store", "advise {damaged.db}", kUsage, "damaged.db: .*damaged store", {"damaged.db"}},
      {"export_a_damaged_store", "export {damaged.db}", kUsage, "damaged.db: .*damaged store", {"damaged.db"}},
      {"stats_a_store_cut_short", "stats {cut.db}", kUsage, "cut.db: .*damaged store, cut short", {"cut.db"}},
      {"advise_a_store_cut_short", "advise {cut.db}", kUsage, "cut.db: .*damaged store, cut short", {"cut.db"}},
      {"regions_of_a_store_cut_short", "advise --regions {cut.db}", kUsage, "cut.db: .*damaged store, cut short",
       {"cut.db"}},
      {"export_a_store_cut_short", "export {cut.db}", kUsage, "cut.db: .*damaged store, cut short", {"cut.db"}},
      {"compare_a_damaged_store", "compare {damaged.db} {run.db}", kUsage, "damaged.db: .*damaged store",
       {"damaged.db"}},
      {"stats_a_text_file", "stats {notes.txt}", kUsage, "notes.txt: not a torchscope store", {"notes.txt"}},
      {"advise_a_text_file", "advise {notes.txt}", kUsage, "notes.txt: not a torchscope store", {"notes.txt"}},
      {"export_a_text_file", "export {notes.txt}", kUsage, "notes.txt: not a torchscope store", {"notes.txt"}},
      {"compare_a_text_file", "compare {notes.txt} {run.db}", kUsage, "notes.txt: not a torchscope store",
       {"notes.txt"}},
      {"fix_a_text_file", "fix {notes.txt}", kUsage, "not a torchscope store", {"notes.txt"}},
      // A store replaced whole: nothing left beside it.
      {"import_over_an_existing_store", "import {trace.json} -o {run.db}", kOk, "imported 1 file", {"trace.json"}},
  };
  return all;
}
// clang-format on

std::string readBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class Battery : public ::testing::TestWithParam<Case> {};

TEST_P(Battery, OutcomeAsExpected) {
  const Case& c = GetParam();
  testing::TempDir dir;
  // Assets in the order the command names them, each built once.
  const std::regex placeholder(R"(\{([^}]+)\})");
  std::string expanded;
  std::string rest = c.command;
  for (std::smatch match; std::regex_search(rest, match, placeholder); rest = match.suffix().str()) {
    const std::string name = match[1];
    const std::string path = dir.file(name);
    const auto builder = assets().find(name);
    ASSERT_NE(builder, assets().end()) << "no asset " << name;
    if (!fs::exists(fs::symlink_status(path))) builder->second(dir.path(), path);
    expanded += match.prefix().str() + "'" + path + "'";
  }
  expanded += rest;
  if (c.name == "export_to_an_unwritable_directory" && geteuid() == 0) GTEST_SKIP() << "root writes anywhere";
  std::map<std::string, std::string> before;
  for (const auto& name : c.unchanged) before[name] = readBytes(dir.file(name));

  const testing::ProgramOutcome outcome = testing::runShell(
      "cd '" + dir.path().string() + "' && timeout 120 '" + testing::torchscopeExecutable().string() + "' " + expanded +
      c.shell_suffix);

  EXPECT_EQ(outcome.exit_code, c.exit_code) << expanded << "\nstderr: " << outcome.err;
  if (!c.message.empty()) {
    EXPECT_THAT(outcome.err, ::testing::ContainsRegex(c.message)) << expanded;
  }
  // One message style: no SQL, no C++ type names, no internal error.
  for (const char* leak : {"SELECT", "INSERT", "std::", "bad_alloc", "internal error", "json.exception"}) {
    EXPECT_THAT(outcome.err, ::testing::Not(::testing::HasSubstr(leak))) << expanded;
  }
  for (const auto& [name, bytes] : before) {
    EXPECT_TRUE(readBytes(dir.file(name)) == bytes) << name << " changed by " << expanded;
  }
  // A device stays a device.
  if (fs::exists(fs::symlink_status(dir.file("device")))) {
    EXPECT_TRUE(fs::is_character_file(dir.file("device"))) << "the device was replaced by " << expanded;
  }
  // No temporary file is left behind, whatever the outcome.
  for (const auto& entry : fs::recursive_directory_iterator(dir.path(), fs::directory_options::skip_permission_denied)) {
    const std::string file = entry.path().filename().string();
    EXPECT_EQ(file.find(".torchscope.tmp"), std::string::npos) << entry.path();
    EXPECT_EQ(file.find(".creating-"), std::string::npos) << entry.path();
  }
  if (fs::exists(dir.file("readonly"))) fs::permissions(dir.file("readonly"), fs::perms::owner_all);
}

INSTANTIATE_TEST_SUITE_P(HostileInput, Battery, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& param) { return param.param.name; });

// A failed write of the output file leaves the file that was there: a full disk mid-export.
TEST(BatteryWrites, AFullDiskMidExportKeepsTheOldOutput) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  testing::TempDir dir;
  const std::string store = dir.file("run.db");
  writeStore(store);
  const std::string output = dir.file("trace.json");
  writeText(output, "the user's own file\n");
  // RLIMIT_FSIZE of 0 stands for a full disk: the new trace cannot grow at all.
  const testing::ProgramOutcome outcome = testing::runShell("ulimit -f 0 2>/dev/null; trap '' XFSZ; '" +
                                                            testing::torchscopeExecutable().string() + "' export '" +
                                                            store + "' -o '" + output + "'");
  EXPECT_EQ(outcome.exit_code, kFailure) << outcome.err;
  EXPECT_THAT(outcome.err, ::testing::HasSubstr("trace.json: cannot write"));
  EXPECT_EQ(readBytes(output), "the user's own file\n");
}

// A gzip file of 512 MiB of whitespace inside traceEvents imports within 600 MiB of address space: the importer
// reads it as a stream and hands the parser one character of each run of whitespace (nlohmann::json's lexer keeps
// every byte it skips: this took 2 GiB for 1 GiB of spaces, 3 GiB when the file was read whole first).
TEST(BatteryMemory, HalfAGigabyteOfWhitespaceImportsInLittleMemory) {
  testing::TempDir dir;
  const std::string trace = dir.file("spaces.json.gz");
  writeGzip(
      trace,
      [](std::size_t i) {
        if (i == 0) return std::string("{\"traceEvents\":[");
        if (i == 513) return std::string("]}");
        return std::string(std::size_t{1} << 20, ' ');
      },
      514);
  const testing::ProgramOutcome outcome = testing::runShell("ulimit -v 614400 && '" +
                                                            testing::torchscopeExecutable().string() + "' import '" +
                                                            trace + "' -o '" + dir.file("spaces.db") + "'");
  EXPECT_EQ(outcome.exit_code, kOk) << outcome.err;
  EXPECT_THAT(outcome.err, ::testing::HasSubstr("imported 1 file"));
}

// Closed pipes stay quiet: `torchscope export | head -c 1` prints no error.
TEST(BatteryWrites, AReaderThatGoesAwayIsNotAnError) {
  testing::TempDir dir;
  const std::string store = dir.file("run.db");
  writeStore(store);
  const testing::ProgramOutcome outcome = testing::runShell(
      "'" + testing::torchscopeExecutable().string() + "' export '" + store + "' | head -c 1 >/dev/null");
  EXPECT_EQ(outcome.exit_code, 0);
  EXPECT_EQ(outcome.err, "");
}

}  // namespace
}  // namespace torchscope
