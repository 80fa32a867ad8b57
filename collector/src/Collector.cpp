#include "Collector.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "Environment.h"
#include "Gpu.h"
#include "ProcessIds.h"
#include "Signals.h"
#include "StackSampler.h"
#include "torchscope/base/Clock.h"
#include "torchscope/store/CommandLine.h"
#include "torchscope/store/RunFolder.h"

namespace torchscope::collector {

namespace {

std::string readSmallFile(const char* path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// /proc/self/cmdline as one line of shell words.
std::string commandLine() {
  const std::string raw = readSmallFile("/proc/self/cmdline");
  std::string line;
  std::size_t begin = 0;
  while (begin < raw.size()) {
    std::size_t end = raw.find('\0', begin);
    if (end == std::string::npos) end = raw.size();
    if (!line.empty()) line += ' ';
    line += store::shellWord(raw.substr(begin, end - begin));
    begin = end + 1;
  }
  return line;
}

std::string hostName() {
  char buffer[256] = {};
  if (gethostname(buffer, sizeof(buffer) - 1) != 0) return "";
  return buffer;
}

std::string processName() {
  std::string name = readSmallFile("/proc/self/comm");
  while (!name.empty() && (name.back() == '\n' || name.back() == '\0')) name.pop_back();
  return name;
}

bool nvidiaDriverPresent() {
  std::error_code ignored;
  return std::filesystem::exists("/proc/driver/nvidia/version", ignored);
}

void writeStderr(const std::string& line) {
  const std::string text = line + "\n";
  ssize_t ignored = write(STDERR_FILENO, text.data(), text.size());
  (void)ignored;
}

std::string plural(std::int64_t count, const char* noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

std::string mebibytes(std::uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return text;
}

// The store's memory budget: TORCHSCOPE_BUFFER_MB when it is a positive number of MiB.
std::size_t memoryBudgetBytes() {
  if (!base::settingIsSet(settings::kBufferMb)) return store::kDefaultMemoryBudgetBytes;
  return static_cast<std::size_t>(settingInteger(settings::kBufferMb)) << 20;
}

// " (N records lost: why)" when the store is missing records, else empty: the one warning a
// failing disk or an overloaded queue gives, appended to the exit line.
std::string lossNote(const Result<void>& closed, const store::WriterStats& stats) {
  if (closed && stats.dropped == 0) return "";
  const std::string why = !closed ? closed.error().message
                                  : "the queue was full (" + mebibytes(stats.queue_budget_bytes) + "; " +
                                        std::string(settings::kBufferMb.name) + " raises it)";
  return " (" + plural(static_cast<std::int64_t>(stats.dropped), "record") + " lost: " + why + ")";
}

// What the queue cost the job, printed with TORCHSCOPE_VERBOSE=1.
std::string queueNote(const store::WriterStats& stats) {
  std::string note = "queue peak " + mebibytes(stats.queue_peak_bytes) + " of " + mebibytes(stats.queue_budget_bytes) +
                     "; " + plural(static_cast<std::int64_t>(stats.written), "record") + " written in " +
                     plural(static_cast<std::int64_t>(stats.batches), "transaction") + "; " +
                     plural(static_cast<std::int64_t>(stats.lock_waits), "call") + " waited for the queue's lock";
  if (stats.lock_waits > 0) {
    char longest[48];
    std::snprintf(longest, sizeof longest, " (longest %.3f ms)", static_cast<double>(stats.longest_lock_wait_ns) / 1e6);
    note += longest;
  }
  return note;
}

}  // namespace

void Tally::reset() {
  compiles = 0;
  graph_breaks = 0;
  recompiles = 0;
  steps = 0;
  syncs = 0;
  notes = 0;
}

bool Tally::empty() const {
  return compiles.load() + graph_breaks.load() + recompiles.load() + steps.load() + syncs.load() + notes.load() == 0;
}

std::string storePathFor(const std::string& requested, pid_t pid, bool first_process, std::int64_t rank) {
  // Every rank is a first process under mpirun or srun (no common parent was traced): the rank
  // in the name keeps their stores apart.
  if (first_process && rank < 0) return requested;
  std::filesystem::path path(requested);
  const std::string extension = path.has_extension() ? path.extension().string() : ".db";
  std::string name = path.stem().string();
  if (rank >= 0) name += ".rank" + std::to_string(rank);
  name += "." + std::to_string(pid) + extension;
  return (path.parent_path() / name).string();
}

Collector& Collector::instance() {
  // Never destroyed: exit handlers, fork handlers and late GPU callbacks may still use it.
  static Collector* collector = new Collector();
  return *collector;
}

void Collector::start(bool python, bool native_libtorch) {
  std::lock_guard lock(mutex_);
  if (owner_pid_.load() == getpid()) return;
  python_ = python;
  verbose_ = settingOn(settings::kVerbose);
  // A process outside Python has GPU activity to record with an NVIDIA driver, and libtorch's requests and
  // operators when it has libtorch loaded (`native_libtorch`: the plugin, attached once the store is open,
  // Lifecycle.cpp).
  if (!python && !native_libtorch && !(kGpuTracingBuiltIn && nvidiaDriverPresent())) return;
  openStore();
  startGpu();
  warnOfAnUnseenProfilerRange();
  if (!python && !native_libtorch && !gpu_started_) {
    // Nothing to record here (no GPU): leave no empty store behind.
    owner_pid_ = -1;
    closeAndRemove(writer_.exchange(nullptr));
  }
}

void Collector::closeAndRemove(store::Writer* writer) {
  if (writer == nullptr) return;
  (void)writer->close();
  std::error_code ignored;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::filesystem::remove(path_ + suffix, ignored);
}

void Collector::openStore() {
  const pid_t pid = getpid();
  const bool first = base::readInteger(settings::kRootPid).value == pid;
  identity_ = rankIdentityFromEnvironment();
  path_ = storePathFor(requestedOutput(), pid, first, identity_.rank >= 0 ? identity_.rank : identity_.local_rank);

  store::WriterOptions options;
  options.mode = store::OpenMode::kCreate;
  options.overflow = store::OverflowPolicy::kDrop;
  options.memory_budget_bytes = memoryBudgetBytes();
  auto opened = store::Writer::open(path_, options);
  if (!opened) {
    if (settingOn(settings::kSummary) || verbose_) {
      // The store's error names the path and says what went wrong ("PATH: cannot write (reason)").
      writeStderr("torchscope: " + aboutFile(path_, opened.error()).message);
    }
    return;
  }
  store::Writer* writer = opened.value().release();

  run_ = store::RunInfo{};
  // A launcher that wraps the user's command (`torchscope fix` runs it under torchscope_compiler.launch) names
  // the command the user gave; it is the run's, so the job's other processes keep their own.
  const std::string given = settingString(settings::kCommandLine);
  run_.command_line = first && !given.empty() ? given : commandLine();
  run_.host = hostName();
  run_.torchscope_version = TORCHSCOPE_VERSION;
  run_.start_ns = base::monotonicNow();
  run_.start_wall_ns = base::wallNow();
  run_.source = "collector";
  writer->setRun(run_);

  store::Process process;
  process.pid = pid;
  process.parent_pid = getppid();
  process.name = processName();
  process.command_line = run_.command_line;
  process.rank = identity_.rank;
  process.local_rank = identity_.local_rank;
  process.world_size = identity_.world_size;
  process.start_ns = run_.start_ns;
  writer->add(process);
  if (!identity_.launcher.empty()) {
    writer->add(store::RunAttribute{std::string(store::kLauncherAttribute), identity_.launcher});
    writer->add(store::RunAttribute{std::string(store::kJobIdAttribute), identity_.job_id});
  }
  {
    // A fork() child writes the roots its parent's bridge sent into its own store.
    std::lock_guard roots_lock(roots_mutex_);
    if (!code_roots_.empty()) {
      writer->add(store::RunAttribute{std::string(store::kUserRootsAttribute), store::rootsJson(code_roots_.user)});
      writer->add(
          store::RunAttribute{std::string(store::kLibraryRootsAttribute), store::rootsJson(code_roots_.library)});
    }
  }

  startWindow(*writer);
  owner_pid_ = pid;
  writer_.store(writer, std::memory_order_release);
  if (python_ && settingOn(settings::kMemory)) {
    const std::int64_t period_ms = settingInteger(settings::kMemorySampleMs);
    host_memory_.store(new HostMemorySampler(*writer, pid, std::chrono::milliseconds(period_ms), window_));
    shareSideThreadTicks();  // a fork() child's stack sampler can start before its store opens
  }
}

void Collector::startWindow(store::Writer& writer) {
  const WindowSettings settings = windowSettingsFromEnvironment();
  if (!settings.error.empty()) {
    writer.add(store::Diagnostic{"collector", "warning", settings.error + ": the whole run is recorded", 1});
    if (settingOn(settings::kSummary) || verbose_) writeStderr("torchscope: " + settings.error);
  }
  window_.begin(settings, run_.start_ns, &Collector::onWindowChange);
  if (auto described = window_.record()) {
    writer.add(std::move(*described));
  }
}

void Collector::onWindowChange(bool open) {
  Collector& collector = instance();
  if (auto described = collector.window_.record()) collector.add(std::move(*described));
  if (collector.gpu_started_) setGpuCapture(open);
}

bool Collector::recordStep(std::int64_t index, std::int64_t start_ns, std::int64_t end_ns, const char* source) {
  if (!active()) return false;
  const bool kept = window_.admitStep(index, end_ns);
  sampleStepEnd(index, start_ns, end_ns, kept);
  if (!kept) return false;
  store::Step step;
  step.pid = processId();
  step.tid = threadId();
  step.index = index;
  step.start_ns = start_ns;
  step.end_ns = end_ns;
  step.source = source;
  if (!add(std::move(step))) return false;
  recordStepMemory(index, end_ns);
  tally_.steps += 1;
  return true;
}

void Collector::recordStepMemory(std::int64_t step, std::int64_t end_ns) {
  if (HostMemorySampler* sampler = host_memory_.load(std::memory_order_acquire)) sampler->recordStepEnd(step, end_ns);
}

void Collector::startStackSampler() {
  std::lock_guard lock(stack_sampler_mutex_);
  if (!python_ || !active() || stack_sampler_.load() != nullptr) return;
  const SampleRate rate = sampleRateFromEnvironment();
  if (!rate.error.empty()) diagnostic("collector", "warning", rate.error);
  if (rate.hz <= 0) return;
  stack_sampler_.store(new StackSampler(getpid(), rate.hz, window_));
  shareSideThreadTicks();
}

void Collector::shareSideThreadTicks() {
  // One side thread waking instead of two: the stack sampler, at least as frequent, reads the RSS too.
  StackSampler* stacks = stack_sampler_.load(std::memory_order_acquire);
  HostMemorySampler* memory = host_memory_.load(std::memory_order_acquire);
  if (stacks != nullptr && memory != nullptr && stacks->period() <= memory->period()) memory->handTicksOver();
}

void Collector::tickHostMemory() {
  if (HostMemorySampler* sampler = host_memory_.load(std::memory_order_acquire)) sampler->sampleIfDue();
}

void Collector::stopStackSampler() {
  std::lock_guard lock(stack_sampler_mutex_);
  // Left allocated: a step end racing with the stop sees a stopped sampler rather than freed memory. A caller that
  // holds the GIL (os._exit from Python) keeps the sampler waiting for it: the wait is short, the process ends.
  if (StackSampler* sampler = stack_sampler_.load()) sampler->stop(std::chrono::milliseconds(200));
}

void Collector::sampleStepEnd(std::int64_t step, std::int64_t start_ns, std::int64_t end_ns, bool kept) {
  if (StackSampler* sampler = stack_sampler_.load(std::memory_order_acquire)) {
    sampler->stepEnded(step, start_ns, end_ns, kept);
  }
}

void Collector::startGpu() {
  store::Writer* writer = writer_.load();
  if (writer == nullptr || !settingOn(settings::kGpu)) return;
  std::string failure;
  gpu_started_ =
      startGpuTracingFor(*writer, python_, window_.isOpen(), window_.mode() == WindowMode::kCudaProfiler, &failure);
  // The backend stores its own diagnostic; the user sees the line only when asking for it.
  if (!gpu_started_ && !failure.empty() && verbose_) writeStderr("torchscope: " + failure);
}

void Collector::warnOfAnUnseenProfilerRange() {
  if (gpu_started_ || window_.mode() != WindowMode::kCudaProfiler) return;
  const std::string message =
      "the capture range is cuda-profiler but GPU tracing is off in this process, so "
      "cudaProfilerStart/Stop cannot be seen: only compile events are kept";
  add(store::Diagnostic{"collector", "warning", message, 1});
  if (python_ && (settingOn(settings::kSummary) || verbose_)) writeStderr("torchscope: " + message);
}

void Collector::shutdown(int exit_code) {
  // Checked before locking: a vfork() child shares this memory and must not touch it.
  if (owner_pid_.load() != getpid()) return;
  if (open_after_fork_.load()) (void)openAfterFork();
  // Before taking mutex_: the sampler's last records may need it to open a fork() child's store.
  stopStackSampler();
  std::lock_guard lock(mutex_);
  store::Writer* writer = writer_.load();
  if (writer == nullptr) return;
  if (HostMemorySampler* sampler = host_memory_.load()) sampler->stop();
  const bool traced_gpu = gpu_started_;
  if (gpu_started_) {
    stopGpuTracingNow();
    gpu_started_ = false;
  }
  if (python_ && !bridge_started_.load()) {
    writer->add(store::Diagnostic{
        "collector", "warning",
        "the Python bridge did not start in this interpreter (python -S, -I or -E, or PYTHONPATH replaced): "
        "only process information was recorded",
        1});
  }
  const bool first = base::readInteger(settings::kRootPid).value == getpid();
  if (!first && !forked_ && !traced_gpu && tally_.empty()) {
    // A helper process the job started (a compiler probe, a shell) that saw nothing: no store.
    writer_.store(nullptr, std::memory_order_release);
    closeAndRemove(writer);
    return;
  }
  const base::Nanos end_ns = base::monotonicNow();
  window_.end(end_ns);
  if (auto described = window_.record()) {
    writer->add(std::move(*described));
  }
  store::Process process;
  process.pid = getpid();
  process.parent_pid = getppid();
  process.name = processName();
  process.command_line = run_.command_line;
  process.rank = identity_.rank;
  process.local_rank = identity_.local_rank;
  process.world_size = identity_.world_size;
  process.start_ns = run_.start_ns;
  process.end_ns = end_ns;
  writer->add(process);
  if (first) {
    run_.exit_code = exit_code;
    writer->setRun(run_);
  }
  writer_.store(nullptr, std::memory_order_release);
  // The writer is closed but not deleted: a thread still holding the pointer only sees a drop.
  const auto closed = writer->close(end_ns);
  const store::WriterStats stats = writer->stats();
  const std::string loss = lossNote(closed, stats);
  if (verbose_) writeStderr("torchscope: " + path_ + ": " + queueNote(stats));
  if (!settingOn(settings::kSummary) && !verbose_) return;
  if (first && python_) {
    printSummary(path_, loss);
  } else if (!loss.empty()) {
    writeStderr("torchscope: " + path_ + loss);
  }
}

void Collector::beforeFork() {
  stack_sampler_mutex_.lock();
  mutex_.lock();
  roots_mutex_.lock();
  // A quiet writer thread holds no SQLite lock that the child would inherit locked.
  if (store::Writer* writer = writer_.load()) writer->flush();
}

void Collector::afterForkInParent() {
  roots_mutex_.unlock();
  mutex_.unlock();
  stack_sampler_mutex_.unlock();
}

void Collector::afterForkInChild() {
  if (store::Writer* writer = writer_.exchange(nullptr)) writer->abandon();
  // The parent's sampler thread does not exist here; its object is left alone (a fresh one comes with the store).
  host_memory_.store(nullptr);
  stack_sampler_.store(nullptr);  // the bridge starts the child's own once Python runs again in it
  if (gpu_started_) gpuTracingForgetInChild();
  gpu_started_ = false;
  tally_.reset();
  bridge_started_.store(true);  // the parent's bridge lives on in the child
  forked_ = true;
  const bool had_store = owner_pid_.load() != -1;
  owner_pid_ = had_store && python_ ? getpid() : -1;
  open_after_fork_.store(had_store && python_);
  roots_mutex_.unlock();
  mutex_.unlock();
  stack_sampler_mutex_.unlock();
}

store::Writer* Collector::openAfterFork() {
  const DeferredTermination deferred;  // the SIGTERM helper needs mutex_
  std::lock_guard lock(mutex_);
  if (open_after_fork_.exchange(false)) openStore();
  return writer_.load();
}

std::string Collector::storePath() const {
  const DeferredTermination deferred;  // the SIGTERM helper needs mutex_
  std::lock_guard lock(mutex_);
  return writer_.load() != nullptr ? path_ : std::string();
}

void Collector::flush() {
  const DeferredTermination deferred;  // the SIGTERM helper needs mutex_
  std::lock_guard lock(mutex_);
  if (gpu_started_) flushGpuTracingNow();
  if (store::Writer* writer = writer_.load(std::memory_order_acquire)) writer->flush();
}

bool Collector::handOverGpu(const std::string& reason) {
  const DeferredTermination deferred;  // the SIGTERM helper needs mutex_
  std::lock_guard lock(mutex_);
  store::Writer* writer = writer_.load(std::memory_order_acquire);
  if (!gpu_started_ || writer == nullptr) return false;
  stopGpuTracingNow();
  gpu_started_ = false;
  const std::string message = "GPU tracing stopped: " + reason + ", which needs CUPTI; the store's GPU timeline "
                              "ends here and the job's own profiler gets every GPU record from now on";
  writer->add(store::Diagnostic{"cupti", "warning", message, 1});
  writeStderr("torchscope: " + message);
  return true;
}

void Collector::setCodeRoots(store::CodeRoots roots) {
  std::lock_guard lock(roots_mutex_);
  code_roots_ = std::move(roots);
}

store::CodeRoots Collector::codeRoots() const {
  std::lock_guard lock(roots_mutex_);
  return code_roots_;
}

bool Collector::setRunField(const std::string& key, const std::string& value) {
  const DeferredTermination deferred;  // the SIGTERM helper needs mutex_
  std::lock_guard lock(mutex_);
  store::Writer* writer = writer_.load();
  if (writer == nullptr) return false;
  if (key == "python_version") {
    run_.python_version = value;
  } else if (key == "torch_version") {
    run_.torch_version = value;
  } else if (key == "cuda_version") {
    run_.cuda_version = value;
  } else if (key == "driver_version") {
    run_.driver_version = value;
  } else if (key == "gpu_name") {
    run_.gpu_name = value;
  } else if (key == "command_line") {
    run_.command_line = value;
  } else {
    return false;
  }
  writer->setRun(run_);
  return true;
}

void Collector::diagnostic(const std::string& source, const std::string& severity, const std::string& message) {
  add(store::Diagnostic{source, severity, message, 1});
}

void Collector::printSummary(const std::string& path, const std::string& loss) const {
  // `torchscope run` shows a status line on the terminal while the job runs: the summary takes its place.
  const std::string erase_status = settingOn(settings::kStatusLine) ? "\r\x1b[K" : "";
  writeStderr(erase_status + "torchscope: " + plural(tally_.compiles.load(), "compile") + ", " +
              plural(tally_.graph_breaks.load(), "graph break") + ", " + plural(tally_.recompiles.load(), "recompile") +
              ", " + plural(tally_.steps.load(), "step") +
              (window_.mode() != WindowMode::kWhole ? std::string(" in the capture window") : std::string()) +
              (tally_.syncs.load() > 0 ? ", " + plural(tally_.syncs.load(), "sync") : std::string()) + " -> " + path +
              loss);
}

}  // namespace torchscope::collector
