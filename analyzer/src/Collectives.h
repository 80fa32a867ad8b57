// A rank's collectives, gathered during the activity scan (Activity.cpp) so that the multi-rank analysis reads
// no table again: the ones the bridge timed on the host and the NCCL kernels with the compute that overlapped them.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

#include "torchscope/base/Saturating.h"
#include "torchscope/store/Reader.h"

namespace torchscope::analyzer {

// One collective's interval, from cpu_ops (category `collective`) or an NCCL kernel.
struct CollectiveSpan {
  base::Nanos start_ns = 0;
  base::Nanos end_ns = 0;
  bool bucket = false;      // a DDP gradient bucket (overlaps the backward pass until the last one starts)
  bool blocking = false;    // the calling thread waited for it (a synchronous torch.distributed call)
  bool gpu = false;         // an NCCL kernel
  double hidden_s = 0;      // for NCCL kernels: the part that compute kernels overlapped
};

// A host-timed collective from its cpu_ops row: `source` and `async` are the row's args.source and args.async.
[[nodiscard]] CollectiveSpan hostCollective(base::Nanos start_ns, base::Nanos end_ns, std::string_view source,
                                            std::int64_t async);

// Fed every kernel in any order; gives each NCCL kernel (a name containing "nccl", any case) with the time the
// other kernels, on any stream or device, overlapped it.
class NcclOverlap {
 public:
  // The interned ids of the kernel names that contain "nccl".
  [[nodiscard]] static Result<std::vector<std::int64_t>> ncclNameIds(const store::Reader& reader);

  explicit NcclOverlap(std::vector<std::int64_t> nccl_name_ids) : nccl_ids_(std::move(nccl_name_ids)) {}

  // False when the store has no NCCL kernel name: addKernel() keeps nothing.
  [[nodiscard]] bool active() const { return !nccl_ids_.empty(); }

  void addKernel(std::int64_t name_id, base::Nanos start_ns, base::Nanos end_ns) {
    if (!active()) return;
    if (isNccl(name_id)) {
      nccl_.push_back({start_ns, end_ns});
    } else {
      compute_.push_back({start_ns, end_ns});
      longest_compute_ = std::max(longest_compute_, base::spanNanos(start_ns, end_ns));
    }
  }

  // The NCCL kernels in start order (ties in the order they were fed).
  [[nodiscard]] std::vector<CollectiveSpan> finish();

 private:
  struct Interval {
    base::Nanos start = 0;
    base::Nanos end = 0;
  };

  [[nodiscard]] bool isNccl(std::int64_t name_id) const {
    for (const auto id : nccl_ids_) {
      if (id == name_id) return true;
    }
    return false;
  }

  std::vector<std::int64_t> nccl_ids_;  // a handful: a linear search beats a hash
  std::vector<Interval> nccl_;
  std::vector<Interval> compute_;
  base::Nanos longest_compute_ = 0;  // bounds how far before an NCCL kernel an overlapping one can start
};

}  // namespace torchscope::analyzer
