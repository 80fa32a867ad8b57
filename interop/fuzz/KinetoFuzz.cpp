// libFuzzer target: arbitrary bytes as a Kineto Chrome trace must never crash the importer.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "torchscope/interop/Trace.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  torchscope::interop::ImportedTrace trace;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)torchscope::interop::sniffFormat(text);
  (void)torchscope::interop::parseKineto(text, "fuzz.json", trace);
  (void)trace.span();
  return 0;
}
