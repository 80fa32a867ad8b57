#include "BufferBudget.h"

#include <algorithm>
#include <cstdlib>

namespace torchscope::cupti {

namespace {
constexpr std::size_t kAlignment = 8;  // CUPTI's requirement for activity buffers
constexpr std::size_t kSmallestBuffer = 4096;
}  // namespace

void BufferBudget::configure(std::size_t limit_bytes, std::size_t buffer_bytes) {
  const std::size_t limit = std::max(limit_bytes, kSmallestBuffer);
  const std::size_t size = std::clamp(buffer_bytes, kSmallestBuffer, limit);
  limit_.store(limit);
  buffer_bytes_.store((size + kAlignment - 1) / kAlignment * kAlignment);
  refused_.store(0);
  peak_.store(in_use_.load());
}

std::uint8_t* BufferBudget::acquire(std::size_t* size) {
  const std::size_t want = buffer_bytes_.load();
  const std::size_t limit = limit_.load();
  std::size_t in_use = in_use_.load();
  do {
    if (want == 0 || in_use + want > limit) {
      refused_.fetch_add(1);
      *size = 0;
      return nullptr;
    }
  } while (!in_use_.compare_exchange_weak(in_use, in_use + want));
  auto* buffer = static_cast<std::uint8_t*>(std::aligned_alloc(kAlignment, want));
  if (buffer == nullptr) {
    in_use_.fetch_sub(want);
    refused_.fetch_add(1);
    *size = 0;
    return nullptr;
  }
  std::size_t peak = peak_.load();
  while (in_use + want > peak && !peak_.compare_exchange_weak(peak, in_use + want)) {
  }
  *size = want;
  return buffer;
}

void BufferBudget::release(std::uint8_t* buffer, std::size_t size) {
  if (buffer == nullptr) return;
  std::free(buffer);
  in_use_.fetch_sub(std::min(size, in_use_.load()));
}

BufferBudget& bufferBudget() {
  static BufferBudget budget;
  return budget;
}

}  // namespace torchscope::cupti
