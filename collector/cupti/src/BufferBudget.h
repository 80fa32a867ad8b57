// Host memory lent to CUPTI for activity buffers, capped: past the cap a request gets no buffer
// and CUPTI drops (and counts) records instead of the process growing without bound. Global
// because CUPTI may hand back a buffer after the tracer that asked for it has stopped.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace torchscope::cupti {

class BufferBudget {
 public:
  // Starts a run's accounting: the buffer size is clamped to [4 KiB, limit]; counts restart.
  void configure(std::size_t limit_bytes, std::size_t buffer_bytes);
  // A fresh 8-byte aligned buffer and its size, or nullptr (and *size = 0) past the cap.
  [[nodiscard]] std::uint8_t* acquire(std::size_t* size);
  // `buffer` may be nullptr; `size` is what acquire() reported for it.
  void release(std::uint8_t* buffer, std::size_t size);

  [[nodiscard]] std::uint64_t refused() const { return refused_.load(); }
  [[nodiscard]] std::size_t inUse() const { return in_use_.load(); }
  [[nodiscard]] std::size_t peak() const { return peak_.load(); }

 private:
  std::atomic<std::size_t> limit_{0};
  std::atomic<std::size_t> buffer_bytes_{0};
  std::atomic<std::size_t> in_use_{0};
  std::atomic<std::size_t> peak_{0};
  std::atomic<std::uint64_t> refused_{0};
};

BufferBudget& bufferBudget();

}  // namespace torchscope::cupti
