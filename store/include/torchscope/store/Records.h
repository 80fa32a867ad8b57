// One struct per table of the store, and the declaration of that table: its name, keys, time columns,
// indexes and columns (Table.h says how; docs/FORMAT.md describes each table and column and is checked
// against these declarations). Times are CLOCK_MONOTONIC nanoseconds; -1 marks an unknown integer, "" an
// unknown text. JSON columns hold a JSON document as text.
#pragma once

#include <tuple>
#include <type_traits>
#include <utility>

#include "torchscope/store/records/Activity.h"
#include "torchscope/store/records/Analysis.h"
#include "torchscope/store/records/Compilation.h"
#include "torchscope/store/records/Memory.h"
#include "torchscope/store/records/Regions.h"
#include "torchscope/store/records/Run.h"
#include "torchscope/store/records/Samples.h"
#include "torchscope/store/records/Window.h"

namespace torchscope::store {

// Every table of the store, in creation order (after `strings`, the interned texts).
using AllRecords =
    std::tuple<RunInfo, RunAttribute, Process, Thread, Device, ApiCall, Kernel, Memcpy, Memset, Sync, NvtxEvent, CpuOp,
               Compile, GraphBreak, Recompile, Step, Finding, FixExperiment, MemorySample, MemoryEvent, MemoryHolder,
               StackFrame, Stack, StackSample, Diagnostic, Collective, CompiledRegion, OpCensus, CaptureWindow>;

// Calls visit(T::kTable) for each table T of the store, in creation order.
template <class F>
void forEachTable(F&& visit) {
  [&]<class... Ts>(std::tuple<Ts...>*) { (visit(Ts::kTable), ...); }(static_cast<AllRecords*>(nullptr));
}

namespace schema {
template <class Tuple>
struct WithoutSingleton;
template <class... Ts>
struct WithoutSingleton<std::tuple<Ts...>> {
  using type = decltype(std::tuple_cat(
      std::declval<std::conditional_t<Ts::kTable.keying == Keying::kSingleton, std::tuple<>, std::tuple<Ts>>>()...));
};
}  // namespace schema

// The records of every table but the one-row run table: what Writer::add() queues and Reader::load() reads
// (Writer::setRun() and Reader::run() handle the run).
using RowRecords = schema::WithoutSingleton<AllRecords>::type;

template <class T>
concept RowRecord = schema::IndexOf<T, RowRecords>::value < std::tuple_size_v<RowRecords>;

}  // namespace torchscope::store
