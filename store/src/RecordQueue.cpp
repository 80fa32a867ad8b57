#include "RecordQueue.h"

#include <sys/mman.h>

namespace torchscope::store {

void UnmapBlock::operator()(std::byte* block) const { ::munmap(block, bytes); }

namespace {

constexpr std::size_t kPage = 4 * 1024;
constexpr std::size_t kLargestBlock = 16 * kPage;
constexpr std::size_t kSmallestBlock = kPage;  // still holds the largest record (a Finding) several times

std::size_t blockBytesFor(std::size_t budget_bytes) {
  // 64 blocks at least, so that the record types in use each have room in a small budget; whole
  // pages, since each block is mapped on its own.
  return std::clamp(budget_bytes / 64, kSmallestBlock, kLargestBlock) / kPage * kPage;
}

}  // namespace

BlockPool::BlockPool(std::size_t block_bytes, std::size_t budget_bytes) : block_bytes_(block_bytes) {
  free_.reserve(budget_bytes / block_bytes + 1);
}

Block BlockPool::take() {
  if (free_.empty()) {
    void* pages = ::mmap(nullptr, block_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (pages == MAP_FAILED) throw std::bad_alloc();
    ++held_;
    return Block(static_cast<std::byte*>(pages), UnmapBlock{block_bytes_});
  }
  Block block = std::move(free_.back());
  free_.pop_back();
  return block;
}

void BlockPool::give(Block block) { free_.push_back(std::move(block)); }

void BlockPool::releaseOneFree() {
  if (free_.empty()) return;
  free_.pop_back();
  --held_;
}

void BlockPool::releaseFree() {
  held_ -= free_.size();
  free_.clear();
  free_.shrink_to_fit();
}

RecordQueue::RecordQueue(std::size_t budget_bytes)
    : budget_bytes_(budget_bytes), pool_(blockBytesFor(budget_bytes), budget_bytes) {}

void RecordQueue::takePending(Batch& batch) {
  batch.swapLists(pending_);
  batch.records_ = std::exchange(pending_.records_, 0);
  batch.text_bytes_ = std::exchange(pending_.text_bytes_, 0);
  in_flight_records_ += batch.records_;
  pending_blocks_ = 0;
}

void RecordQueue::release(Batch& batch) {
  std::apply([&](auto&... list) { (list.releaseBlocks(pool_), ...); }, batch.lists_);
  text_bytes_ -= batch.text_bytes_;
  in_flight_records_ -= batch.records_;
  batch.records_ = 0;
  batch.text_bytes_ = 0;
}

}  // namespace torchscope::store
