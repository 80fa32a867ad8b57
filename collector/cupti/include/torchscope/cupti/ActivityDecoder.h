// Turns CUPTI activity records into store records on the store's time base. Pure data work: no
// CUPTI calls, so tests and the fuzzer drive it with synthetic records built from the installed
// CUPTI structs (CUDA 13: Kernel10, Memcpy6, MemcpyPtoP4, Memset4, Synchronization2, API,
// Marker2, Overhead3, Device5, Memory4, MemoryPool3).
//
// Error contract: decode() accepts any record of a known size; unknown kinds, out-of-range enum
// values and null strings become "unknown"/"" and counts, never a crash.
#pragma once

#include <cupti.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "torchscope/store/Records.h"
#include "torchscope/store/Writer.h"

namespace torchscope::cupti {

// Converts CUPTI timestamps (ns) to CLOCK_MONOTONIC ns: store = cupti + offset.
class ClockAlignment {
 public:
  using Clock = std::function<std::int64_t()>;
  // CUPTI already reports CLOCK_MONOTONIC (a timestamp callback is registered).
  [[nodiscard]] static ClockAlignment identity() { return ClockAlignment(0); }
  // Reads `monotonic`, `cupti`, `monotonic` `samples` times and keeps the tightest bracket: the
  // offset error is at most half that bracket.
  [[nodiscard]] static ClockAlignment calibrate(const Clock& cupti, const Clock& monotonic, int samples = 16);
  explicit ClockAlignment(std::int64_t offset_ns, std::int64_t uncertainty_ns = 0)
      : offset_ns_(offset_ns), uncertainty_ns_(uncertainty_ns) {}

  // 0 (CUPTI's "not known") and values past the int64 range become -1.
  [[nodiscard]] base::Nanos toStore(std::uint64_t cupti_ns) const;
  [[nodiscard]] std::int64_t offsetNs() const { return offset_ns_; }
  [[nodiscard]] std::int64_t uncertaintyNs() const { return uncertainty_ns_; }

 private:
  std::int64_t offset_ns_ = 0;
  std::int64_t uncertainty_ns_ = 0;
};

// What one or more buffers decoded to, written to the store in one go.
struct DecodedBatch {
  std::vector<store::Kernel> kernels;
  std::vector<store::Memcpy> memcpys;
  std::vector<store::Memset> memsets;
  std::vector<store::Sync> syncs;
  std::vector<store::ApiCall> api_calls;
  std::vector<store::NvtxEvent> nvtx;
  std::vector<store::Device> devices;
  std::vector<store::MemoryEvent> memory_events;
  std::vector<store::Diagnostic> diagnostics;

  [[nodiscard]] std::size_t size() const;
  void writeTo(store::Writer& writer) &&;
};

struct DecoderOptions {
  std::int64_t pid = 0;  // records carry no process id except API calls
  bool keep_driver_api = false;
  std::size_t max_open_nvtx_ranges = 1 << 16;  // bounds memory for starts waiting for their end
};

class ActivityDecoder {
 public:
  // Name of a CUPTI callback id (cuptiGetCallbackName); "" when unknown.
  using NameLookup = std::function<std::string(CUpti_CallbackDomain, std::uint32_t)>;
  // True for a synchronisation whose row the Callback API already wrote (with its source line).
  using SyncFilter = std::function<bool(std::uint32_t correlation_id)>;

  ActivityDecoder(DecoderOptions options, ClockAlignment clock, NameLookup names, SyncFilter already_recorded = {});

  // `record` must be at least as large as the struct of its kind.
  void decode(const CUpti_Activity& record, DecodedBatch& out);
  // End of the run: ranges never closed and overhead totals become diagnostics.
  void finish(DecodedBatch& out);

  [[nodiscard]] std::uint64_t decodedRecords() const { return decoded_; }
  [[nodiscard]] std::uint64_t unknownRecords() const { return unknown_; }

 private:
  struct OpenMarker {
    bool is_end = false;
    store::NvtxEvent event;
  };
  struct OverheadTotal {
    std::int64_t count = 0;
    std::int64_t total_ns = 0;
  };

  void decodeKernel(const CUpti_ActivityKernel10& k, DecodedBatch& out) const;
  void decodeMemcpy(const CUpti_ActivityMemcpy6& m, DecodedBatch& out) const;
  void decodePeerMemcpy(const CUpti_ActivityMemcpyPtoP4& m, DecodedBatch& out) const;
  void decodeMemset(const CUpti_ActivityMemset4& m, DecodedBatch& out) const;
  void decodeSync(const CUpti_ActivitySynchronization2& s, DecodedBatch& out) const;
  void decodeApi(const CUpti_ActivityAPI& a, bool runtime, DecodedBatch& out);
  void decodeMarker(const CUpti_ActivityMarker2& m, DecodedBatch& out);
  void decodeOverhead(const CUpti_ActivityOverhead3& o);
  static void decodeDevice(const CUpti_ActivityDevice5& d, DecodedBatch& out);
  void decodeMemory(const CUpti_ActivityMemory4& m, DecodedBatch& out) const;
  void decodeMemoryPool(const CUpti_ActivityMemoryPool3& p, DecodedBatch& out) const;
  const std::string& apiName(CUpti_CallbackDomain domain, std::uint32_t cbid);

  DecoderOptions options_;
  ClockAlignment clock_;
  NameLookup names_;
  SyncFilter already_recorded_;
  std::unordered_map<std::uint64_t, std::string> name_cache_;
  std::unordered_map<std::uint32_t, OpenMarker> open_markers_;  // by NVTX range id
  std::map<std::uint32_t, OverheadTotal> overheads_;            // by CUpti_ActivityOverheadKind
  std::uint64_t markers_refused_ = 0;
  std::uint64_t decoded_ = 0;
  std::uint64_t unknown_ = 0;
};

}  // namespace torchscope::cupti
