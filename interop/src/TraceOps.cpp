#include "TraceOps.h"

#include <algorithm>
#include <iterator>

#include "torchscope/base/Saturating.h"

namespace torchscope::interop {

namespace {

template <class T, class F>
void forEach(std::vector<T>& rows, F&& apply) {
  for (auto& row : rows) apply(row);
}

template <class T>
void append(std::vector<T>& into, std::vector<T>& from) {
  into.insert(into.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
}

void fillIfEmpty(std::string& into, const std::string& from) {
  if (into.empty()) into = from;
}

}  // namespace

std::int64_t ImportedTrace::malformed() const {
  std::int64_t total = 0;
  for (const auto& skipped_input : skipped) total += skipped_input.count;
  return total;
}

std::pair<base::Nanos, base::Nanos> ImportedTrace::span() const {
  base::Nanos begin = INT64_MAX;
  base::Nanos end = INT64_MIN;
  const auto take = [&](base::Nanos start_ns, base::Nanos end_ns) {
    begin = std::min(begin, start_ns);
    end = std::max(end, end_ns);
  };
  for (const auto& row : api_calls) take(row.start_ns, row.end_ns);
  for (const auto& row : kernels) take(row.start_ns, row.end_ns);
  for (const auto& row : memcpys) take(row.start_ns, row.end_ns);
  for (const auto& row : memsets) take(row.start_ns, row.end_ns);
  for (const auto& row : syncs) take(row.start_ns, row.end_ns);
  for (const auto& row : cpu_ops) take(row.start_ns, row.end_ns);
  for (const auto& row : compiles) take(row.start_ns, row.end_ns);
  for (const auto& row : graph_breaks) take(row.ts_ns, row.ts_ns);
  for (const auto& row : recompiles) take(row.ts_ns, row.ts_ns);
  for (const auto& row : steps) take(row.start_ns, row.end_ns);
  for (const auto& row : memory_samples) take(row.ts_ns, row.ts_ns);
  for (const auto& row : memory_events) take(row.ts_ns, row.ts_ns);
  for (const auto& row : processes) take(row.start_ns, row.end_ns >= row.start_ns ? row.end_ns : row.start_ns);
  if (begin > end) return {0, -1};
  return {begin, end};
}

void shiftTimes(ImportedTrace& trace, base::Nanos delta_ns) {
  if (delta_ns == 0) return;
  const auto shifted = [delta_ns](base::Nanos ns) { return base::saturatingAdd(ns, delta_ns); };
  const auto interval = [shifted](auto& row) {
    row.start_ns = shifted(row.start_ns);
    row.end_ns = shifted(row.end_ns);
  };
  const auto instant = [shifted](auto& row) { row.ts_ns = shifted(row.ts_ns); };
  forEach(trace.api_calls, interval);
  forEach(trace.kernels, interval);
  forEach(trace.memcpys, interval);
  forEach(trace.memsets, interval);
  forEach(trace.syncs, interval);
  forEach(trace.cpu_ops, interval);
  forEach(trace.compiles, interval);
  forEach(trace.steps, interval);
  forEach(trace.graph_breaks, instant);
  forEach(trace.recompiles, instant);
  forEach(trace.memory_samples, instant);
  forEach(trace.memory_events, instant);
  forEach(trace.processes, [shifted](store::Process& row) {
    row.start_ns = shifted(row.start_ns);
    if (row.end_ns >= 0) row.end_ns = shifted(row.end_ns);
  });
}

void renamePid(ImportedTrace& trace, std::int64_t from, std::int64_t to) {
  const auto rename = [from, to](auto& row) {
    if (row.pid == from) row.pid = to;
  };
  forEach(trace.processes, rename);
  forEach(trace.threads, [from, to](store::Thread& row) {
    if (row.pid == from) row.pid = to;
    if (row.tid == from) row.tid = to;  // the main thread's id is the process id
  });
  forEach(trace.api_calls, rename);
  forEach(trace.kernels, rename);
  forEach(trace.memcpys, rename);
  forEach(trace.memsets, rename);
  forEach(trace.syncs, rename);
  forEach(trace.cpu_ops, rename);
  forEach(trace.compiles, rename);
  forEach(trace.graph_breaks, rename);
  forEach(trace.recompiles, rename);
  forEach(trace.steps, rename);
  forEach(trace.memory_samples, rename);
  forEach(trace.memory_events, rename);
}

void appendTrace(ImportedTrace& into, ImportedTrace&& from) {
  fillIfEmpty(into.run.source, from.run.source);
  fillIfEmpty(into.run.torch_version, from.run.torch_version);
  fillIfEmpty(into.run.cuda_version, from.run.cuda_version);
  fillIfEmpty(into.run.driver_version, from.run.driver_version);
  fillIfEmpty(into.run.gpu_name, from.run.gpu_name);
  fillIfEmpty(into.run.host, from.run.host);
  append(into.attributes, from.attributes);
  append(into.processes, from.processes);
  append(into.threads, from.threads);
  append(into.devices, from.devices);
  append(into.api_calls, from.api_calls);
  append(into.kernels, from.kernels);
  append(into.memcpys, from.memcpys);
  append(into.memsets, from.memsets);
  append(into.syncs, from.syncs);
  append(into.cpu_ops, from.cpu_ops);
  append(into.compiles, from.compiles);
  append(into.graph_breaks, from.graph_breaks);
  append(into.recompiles, from.recompiles);
  append(into.steps, from.steps);
  append(into.memory_samples, from.memory_samples);
  append(into.memory_events, from.memory_events);
  append(into.diagnostics, from.diagnostics);
  append(into.skipped, from.skipped);
}

}  // namespace torchscope::interop
