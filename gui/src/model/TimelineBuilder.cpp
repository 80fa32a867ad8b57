// Arranges the loaded records into tracks: per thread (steps, NVTX, CPU ops, CUDA API, syncs),
// per process (torch.compile and its graph breaks/recompiles) and per GPU stream.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "torchscope/gui/Text.h"
#include "torchscope/gui/Timeline.h"

namespace torchscope::gui {

namespace {

enum class Domain : int { kProcess = 0, kGpu = 1 };

// Sort key of a track: processes before GPUs, then ids, then the kind's display order.
using TrackKey = std::tuple<Domain, std::int64_t, std::int64_t, std::int64_t, TrackKind>;
constexpr std::int64_t kProcessWide = -1;  // tid of per-process tracks (compiles): shown first

class Builder {
 public:
  explicit Builder(Timeline& timeline) : timeline_(timeline) {}

  void add(const TrackKey& key, Nanos start, Nanos end, std::string name, RecordKind kind, std::size_t record) {
    const auto [it, inserted] = name_ids_.try_emplace(name, static_cast<std::uint32_t>(timeline_.names.size()));
    if (inserted) timeline_.names.push_back(std::move(name));
    pending_[key].push_back({start, std::max(start, end), it->second, static_cast<std::uint32_t>(record), kind});
    begin_ = std::min(begin_, start);
    end_ = std::max(end_, std::max(start, end));
  }

  void finish() {
    const Records& records = timeline_.records;
    std::map<std::int64_t, std::string> process_names;
    for (const auto& process : records.processes) process_names[process.pid] = processLabel(process);
    std::map<std::pair<std::int64_t, std::int64_t>, std::string> thread_names;
    for (const auto& thread : records.threads) thread_names[{thread.pid, thread.tid}] = thread.name;
    std::map<std::int64_t, std::string> device_names;
    for (const auto& device : records.devices) device_names[device.device] = device.name;
    std::set<std::int64_t> gpu_pids;
    for (const auto& [key, slices] : pending_) {
      if (std::get<0>(key) == Domain::kGpu) gpu_pids.insert(std::get<3>(key));
    }

    for (auto& [key, slices] : pending_) {
      const auto& [domain, a, b, c, kind] = key;
      Track track;
      track.kind = kind;
      if (domain == Domain::kProcess) {
        const auto process = process_names.find(a);
        track.group = process != process_names.end() ? process->second : fmt::format("process {}", a);
        std::string owner = b == kProcessWide ? std::string{} : fmt::format("thread {}", b);
        const auto thread = thread_names.find({a, b});
        if (thread != thread_names.end() && !thread->second.empty()) owner += fmt::format(" ({})", thread->second);
        track.title = owner.empty() ? std::string(kindLabel(kind)) : fmt::format("{} · {}", owner, kindLabel(kind));
      } else {
        const auto device = device_names.find(a);
        track.group = device != device_names.end() && !device->second.empty()
                          ? fmt::format("GPU {} ({})", a, device->second)
                          : fmt::format("GPU {}", a);
        track.title = b >= 0 ? fmt::format("stream {}", b) : std::string("stream ?");
        if (gpu_pids.size() > 1) track.title += fmt::format(" · process {}", c);
      }
      track.lanes = buildLanes(std::move(slices));
      timeline_.tracks.push_back(std::move(track));
    }
    if (begin_ > end_) {
      begin_ = records.run.start_ns;
      end_ = std::max(records.run.end_ns, begin_ + 1);
    }
    timeline_.begin_ns = begin_;
    timeline_.end_ns = std::max(end_, begin_ + 1);
  }

 private:
  static std::string processLabel(const store::Process& process) {
    std::string label = fmt::format("process {}", process.pid);
    if (!process.name.empty()) label += fmt::format(" ({})", process.name);
    if (process.rank >= 0) label += fmt::format(" rank {}", process.rank);
    return label;
  }

  static std::string_view kindLabel(TrackKind kind) {
    switch (kind) {
      case TrackKind::kSteps: return "steps";
      case TrackKind::kNvtx: return "NVTX";
      case TrackKind::kCpuOps: return "CPU ops";
      case TrackKind::kApiCalls: return "CUDA API";
      case TrackKind::kSyncs: return "syncs";
      case TrackKind::kGpuStream: return "GPU";
      case TrackKind::kCompiles: return "torch.compile";
      case TrackKind::kCompileEvents: return "graph breaks · recompiles";
    }
    return "";
  }

  Timeline& timeline_;
  std::unordered_map<std::string, std::uint32_t> name_ids_;
  std::map<TrackKey, std::vector<Slice>> pending_;
  Nanos begin_ = std::numeric_limits<Nanos>::max();
  Nanos end_ = std::numeric_limits<Nanos>::min();
};

TrackKey threadKey(std::int64_t pid, std::int64_t tid, TrackKind kind) {
  return {Domain::kProcess, pid, tid, 0, kind};
}
TrackKey gpuKey(std::int64_t device, std::int64_t stream, std::int64_t pid) {
  return {Domain::kGpu, device, stream, pid, TrackKind::kGpuStream};
}

std::string memcpyLabel(const store::Memcpy& copy) {
  return fmt::format("Memcpy {}{}", copy.copy_kind, copy.pageable ? " (pageable)" : "");
}

std::string syncLabel(const store::Sync& sync) {
  std::string label = sync.op.empty() ? fmt::format("sync ({})", sync.sync_kind) : sync.op;
  if (!sync.file.empty()) label += fmt::format(" @ {}", sourceLocation(baseName(sync.file), sync.line));
  return label;
}

void addCpuRecords(Builder& builder, const Records& records) {
  for (std::size_t i = 0; i < records.steps.size(); ++i) {
    const auto& step = records.steps[i];
    builder.add(threadKey(step.pid, step.tid, TrackKind::kSteps), step.start_ns, step.end_ns,
                fmt::format("step {}", step.index), RecordKind::kStep, i);
  }
  for (std::size_t i = 0; i < records.nvtx.size(); ++i) {
    const auto& event = records.nvtx[i];
    builder.add(threadKey(event.pid, event.tid, TrackKind::kNvtx), event.start_ns, event.end_ns, event.name,
                RecordKind::kNvtx, i);
  }
  for (std::size_t i = 0; i < records.cpu_ops.size(); ++i) {
    const auto& op = records.cpu_ops[i];
    builder.add(threadKey(op.pid, op.tid, TrackKind::kCpuOps), op.start_ns, op.end_ns, op.name, RecordKind::kCpuOp,
                i);
  }
  for (std::size_t i = 0; i < records.api_calls.size(); ++i) {
    const auto& call = records.api_calls[i];
    builder.add(threadKey(call.pid, call.tid, TrackKind::kApiCalls), call.start_ns, call.end_ns, call.name,
                RecordKind::kApiCall, i);
  }
  for (std::size_t i = 0; i < records.syncs.size(); ++i) {
    const auto& sync = records.syncs[i];
    builder.add(threadKey(sync.pid, sync.tid, TrackKind::kSyncs), sync.start_ns, sync.end_ns, syncLabel(sync),
                RecordKind::kSync, i);
  }
}

void addGpuRecords(Builder& builder, const Records& records) {
  for (std::size_t i = 0; i < records.kernels.size(); ++i) {
    const auto& kernel = records.kernels[i];
    builder.add(gpuKey(kernel.device, kernel.stream, kernel.pid), kernel.start_ns, kernel.end_ns, kernel.name,
                RecordKind::kKernel, i);
  }
  for (std::size_t i = 0; i < records.memcpys.size(); ++i) {
    const auto& copy = records.memcpys[i];
    builder.add(gpuKey(copy.device, copy.stream, copy.pid), copy.start_ns, copy.end_ns, memcpyLabel(copy),
                RecordKind::kMemcpy, i);
  }
  for (std::size_t i = 0; i < records.memsets.size(); ++i) {
    const auto& set = records.memsets[i];
    builder.add(gpuKey(set.device, set.stream, set.pid), set.start_ns, set.end_ns, "Memset", RecordKind::kMemset, i);
  }
}

void addCompileRecords(Builder& builder, const Records& records) {
  for (std::size_t i = 0; i < records.compiles.size(); ++i) {
    const auto& compile = records.compiles[i];
    std::string label = fmt::format("compile {} [{}/{}]", compile.co_name, compile.frame_id, compile.frame_compile_id);
    if (!compile.status.empty() && compile.status != "ok") label += fmt::format(" ({})", compile.status);
    builder.add(threadKey(compile.pid, kProcessWide, TrackKind::kCompiles), compile.start_ns, compile.end_ns,
                std::move(label), RecordKind::kCompile, i);
  }
  for (std::size_t i = 0; i < records.graph_breaks.size(); ++i) {
    const auto& graph_break = records.graph_breaks[i];
    builder.add(threadKey(graph_break.pid, kProcessWide, TrackKind::kCompileEvents), graph_break.ts_ns,
                graph_break.ts_ns, fmt::format("graph break: {}", graph_break.break_type), RecordKind::kGraphBreak, i);
  }
  for (std::size_t i = 0; i < records.recompiles.size(); ++i) {
    const auto& recompile = records.recompiles[i];
    builder.add(threadKey(recompile.pid, kProcessWide, TrackKind::kCompileEvents), recompile.ts_ns, recompile.ts_ns,
                fmt::format("recompile {} ({})", recompile.co_name, recompile.cause), RecordKind::kRecompile, i);
  }
}

}  // namespace

std::shared_ptr<const Timeline> buildTimeline(Records records) {
  auto timeline = std::make_shared<Timeline>();
  timeline->records = std::move(records);
  Builder builder(*timeline);
  addCpuRecords(builder, timeline->records);
  addGpuRecords(builder, timeline->records);
  addCompileRecords(builder, timeline->records);
  builder.finish();
  return timeline;
}

std::size_t Timeline::sliceCount() const {
  std::size_t count = 0;
  for (const auto& track : tracks) {
    for (const auto& lane : track.lanes) count += lane.slices().size();
  }
  return count;
}

std::vector<bool> Timeline::matchingNames(std::string_view needle) const {
  std::vector<bool> mask(names.size(), false);
  if (needle.empty()) return mask;
  for (std::size_t i = 0; i < names.size(); ++i) mask[i] = containsIgnoringCase(names[i], needle);
  return mask;
}

std::vector<SliceRef> Timeline::search(std::string_view needle) const {
  const std::vector<bool> mask = matchingNames(needle);
  std::vector<SliceRef> found;
  if (std::find(mask.begin(), mask.end(), true) == mask.end()) return found;
  for (std::uint32_t t = 0; t < tracks.size(); ++t) {
    for (std::uint32_t l = 0; l < tracks[t].lanes.size(); ++l) {
      const auto& slices = tracks[t].lanes[l].slices();
      for (std::uint32_t i = 0; i < slices.size(); ++i) {
        if (mask[slices[i].name]) found.push_back({t, l, i});
      }
    }
  }
  return found;
}

}  // namespace torchscope::gui
