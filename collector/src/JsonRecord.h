// The bridge's JSON objects decode into store records column by column as their tables declare them
// (torchscope/store/JsonRecord.h); what a record needs beyond its columns (the pid, a default taken from another
// column) CApi.cpp sets.
#pragma once

#include "torchscope/store/JsonRecord.h"
#include "torchscope/store/Records.h"

namespace torchscope::collector {

using store::integerOf;
using store::recordFromJson;
using store::textOf;

}  // namespace torchscope::collector
