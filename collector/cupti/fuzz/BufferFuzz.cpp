// libFuzzer target for the activity decoder: the input becomes a buffer of CUPTI records of the
// installed structs with arbitrary field values (string pointers aimed at valid text or null, as
// CUPTI guarantees), walked and decoded as the tracer does, then finished.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "torchscope/cupti/ActivityDecoder.h"
#include "torchscope/cupti/FakeCupti.h"

namespace {

using torchscope::cupti::ActivityDecoder;
using torchscope::cupti::ClockAlignment;
using torchscope::cupti::DecodedBatch;
using torchscope::cupti::DecoderOptions;

constexpr CUpti_ActivityKind kKinds[] = {
    CUPTI_ACTIVITY_KIND_KERNEL,  CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET,            CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
    CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER,            CUPTI_ACTIVITY_KIND_MARKER,
    CUPTI_ACTIVITY_KIND_OVERHEAD, CUPTI_ACTIVITY_KIND_DEVICE,           CUPTI_ACTIVITY_KIND_PCIE,
};
const char* const kStrings[] = {nullptr, "", "volta_sgemm_128x64_nn", "aten::mm", "\xff\xfe invalid utf-8"};

void pointTo(std::uint8_t* record, std::size_t offset, std::uint8_t selector) {
  const char* text = kStrings[selector % (sizeof(kStrings) / sizeof(kStrings[0]))];
  std::memcpy(record + offset, &text, sizeof(text));
}

// Replaces the string pointers the decoder reads with ones that are valid or null.
void fixPointers(CUpti_ActivityKind kind, std::uint8_t* record, std::uint8_t selector) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      pointTo(record, offsetof(CUpti_ActivityKernel10, name), selector);
      break;
    case CUPTI_ACTIVITY_KIND_MARKER:
      pointTo(record, offsetof(CUpti_ActivityMarker2, name), selector);
      pointTo(record, offsetof(CUpti_ActivityMarker2, domain), static_cast<std::uint8_t>(selector >> 4));
      break;
    case CUPTI_ACTIVITY_KIND_DEVICE: pointTo(record, offsetof(CUpti_ActivityDevice5, name), selector); break;
    default: break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::uint8_t flags = data[0];
  std::vector<std::uint8_t> buffer;
  for (std::size_t at = 1; at < size;) {
    const CUpti_ActivityKind kind = kKinds[data[at] % (sizeof(kKinds) / sizeof(kKinds[0]))];
    const std::uint8_t selector = data[at];
    ++at;
    const std::size_t record_size = torchscope::cupti::syntheticRecordSize(kind);
    const std::size_t offset = buffer.size();
    buffer.resize(offset + (record_size + 7) / 8 * 8, 0);
    const std::size_t taken = std::min(record_size, size - at);
    std::memcpy(buffer.data() + offset, data + at, taken);
    at += taken;
    std::memcpy(buffer.data() + offset, &kind, sizeof(kind));
    fixPointers(kind, buffer.data() + offset, selector);
  }

  const auto clock = ClockAlignment((flags & 1) ? -1'000'000'000 : 1'000);
  ActivityDecoder decoder(DecoderOptions{1, (flags & 2) != 0, (flags & 4) ? 2u : 1024u}, clock,
                          [](CUpti_CallbackDomain, std::uint32_t cbid) {
                            return cbid % 3 == 0 ? std::string() : "cudaCall_v" + std::to_string(cbid);
                          },
                          [](std::uint32_t correlation) { return correlation % 5 == 0; });
  DecodedBatch batch;
  CUpti_Activity* record = nullptr;
  while (torchscope::cupti::nextSyntheticRecord(buffer.data(), buffer.size(), &record) == CUPTI_SUCCESS) {
    decoder.decode(*record, batch);
  }
  decoder.finish(batch);
  return batch.size() > 1'000'000 ? 1 : 0;
}
