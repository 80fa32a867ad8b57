// One struct per table of the store, and the declaration of that table: its name, keys, time columns,
// indexes and columns (Table.h says how; docs/FORMAT.md describes each table and column and is checked
// against these declarations). Times are CLOCK_MONOTONIC nanoseconds; -1 marks an unknown integer, "" an
// unknown text. JSON columns hold a JSON document as text.
#pragma once

#include <tuple>

#include "torchscope/store/records/Activity.h"
#include "torchscope/store/records/Analysis.h"
#include "torchscope/store/records/Compilation.h"
#include "torchscope/store/records/Memory.h"
#include "torchscope/store/records/Run.h"
#include "torchscope/store/records/Samples.h"

namespace torchscope::store {

// Every table of the store, in creation order (after `strings`, the interned texts).
using AllRecords = std::tuple<RunInfo, RunAttribute, Process, Thread, Device, ApiCall, Kernel, Memcpy, Memset, Sync,
                              NvtxEvent, CpuOp, Compile, GraphBreak, Recompile, Step, Finding, FixExperiment,
                              MemorySample, MemoryEvent, MemoryHolder, StackFrame, Stack, StackSample, Diagnostic>;

}  // namespace torchscope::store
