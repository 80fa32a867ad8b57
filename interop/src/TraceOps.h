// Whole-trace operations the importers share: moving times, renaming a process, merging.
#pragma once

#include "torchscope/interop/Trace.h"

namespace torchscope::interop {

// Adds `delta_ns` to every timestamp of every record.
void shiftTimes(ImportedTrace& trace, base::Nanos delta_ns);

// Renames process `from` to `to` in every record that names a process.
void renamePid(ImportedTrace& trace, std::int64_t from, std::int64_t to);

// Appends every record of `from` to `into`; the run info of `into` wins where it is set.
void appendTrace(ImportedTrace& into, ImportedTrace&& from);

}  // namespace torchscope::interop
