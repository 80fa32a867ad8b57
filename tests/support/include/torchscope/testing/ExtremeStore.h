// A store with values at the int64 edges in every table, written through store::Writer: times at
// INT64_MIN and INT64_MAX, spans that end before they start, counts, bytes, steps and ids at the edges,
// hostile ranks (a world of INT64_MAX ranks, a rank outside its world), doubles of 1e300, text that is
// not UTF-8, and (by SQL, as the writer never does it) an interned string at id INT64_MAX. The tests of
// every reader (analyzer, export, GUI model, CLI) open it to show that such a store never overflows,
// hangs or crashes them.
#pragma once

#include <string>

namespace torchscope::testing {

// Writes the store at `store_path` (replacing it); returns "" or an error message.
std::string writeExtremeValuesStore(const std::string& store_path);

// The bytes that are not UTF-8 in the store's command line, diagnostics and names.
inline constexpr const char* kNotUtf8 = "\xC3\x28\xFF\xFE";

}  // namespace torchscope::testing
