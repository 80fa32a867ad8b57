// The writer's queue: records waiting to be committed and the batch being committed, held within
// one memory budget. Records are kept in fixed-size blocks drawn from a pool that never holds more
// than the budget, so the queue's memory is bounded whatever the rate: no array doubles its
// capacity (and copies itself under the producers' lock) as it grows, and blocks are reused batch
// after batch instead of being freed into, and fragmenting, the allocator. Text that does not fit
// inside a std::string is counted against the same budget.
//
// Not thread-safe: the writer guards the queue with its own mutex.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <new>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "Tables.h"
#include "torchscope/store/Records.h"

namespace torchscope::store {

// A block maps its own pages (mmap), so that freeing it gives the memory back to the system instead
// of leaving it in an allocator arena of the thread that happened to allocate it.
struct UnmapBlock {
  std::size_t bytes = 0;
  void operator()(std::byte* block) const;
};
using Block = std::unique_ptr<std::byte[], UnmapBlock>;

// Blocks of one size, allocated on first need and kept for reuse.
class BlockPool {
 public:
  // Blocks of `block_bytes`, at most `budget_bytes` of them in all.
  BlockPool(std::size_t block_bytes, std::size_t budget_bytes);

  [[nodiscard]] std::size_t blockBytes() const { return block_bytes_; }
  [[nodiscard]] std::size_t freeBlocks() const { return free_.size(); }
  // Bytes of every block allocated, in use or free.
  [[nodiscard]] std::size_t heldBytes() const { return held_ * block_bytes_; }
  // A free block, or a new one; the caller has checked the budget. Throws std::bad_alloc when the
  // system has no memory left (as a std::vector would).
  Block take();
  void give(Block block);
  // Frees one block not in use, or all of them.
  void releaseOneFree();
  void releaseFree();

 private:
  std::size_t block_bytes_;
  std::vector<Block> free_;
  std::size_t held_ = 0;
};

// Heap bytes of a record's text: what its strings hold outside the record itself.
template <class T>
std::size_t textHeapBytes(const T& record) {
  static const std::size_t kInline = std::string().capacity();
  std::size_t bytes = 0;
  std::apply(
      [&](const auto&... column) {
        auto add = [&](const auto& value) {
          if constexpr (std::is_same_v<std::decay_t<decltype(value)>, std::string>) {
            if (value.capacity() > kInline) bytes += value.capacity() + 1;
          }
        };
        (add(record.*(column.member)), ...);
      },
      schema::kColumns<T>);
  return bytes;
}

// The queued records of one type, in order, in pool blocks.
template <class T>
class RecordBlocks {
  static_assert(sizeof(T) * 4 <= 4096, "the smallest block holds several records");

 public:
  RecordBlocks() = default;
  RecordBlocks(const RecordBlocks&) = delete;
  RecordBlocks& operator=(const RecordBlocks&) = delete;
  ~RecordBlocks() { destroyRecords(); }

  // Exchanges records and blocks: how a batch takes the queue's pending records.
  void swap(RecordBlocks& other) noexcept {
    blocks_.swap(other.blocks_);
    std::swap(size_, other.size_);
    std::swap(per_block_, other.per_block_);
  }

  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] bool empty() const { return size_ == 0; }
  // Whether the next record needs a block of `block_bytes` more.
  [[nodiscard]] bool needsBlock(std::size_t block_bytes) const {
    return size_ == blocks_.size() * perBlock(block_bytes);
  }

  void push(T&& record, BlockPool& pool) {
    const std::size_t per_block = perBlock(pool.blockBytes());
    if (size_ == blocks_.size() * per_block) blocks_.push_back(pool.take());
    per_block_ = per_block;
    new (slot(size_)) T(std::move(record));
    ++size_;
  }

  template <class F>
  void forEach(F&& visit) const {
    for (std::size_t i = 0; i < size_; ++i) visit(*std::launder(reinterpret_cast<const T*>(slot(i))));
  }

  // Destroys the records and keeps the blocks (no shared state: safe outside the writer's lock).
  void destroyRecords() {
    for (std::size_t i = 0; i < size_; ++i) std::launder(reinterpret_cast<T*>(slot(i)))->~T();
    size_ = 0;
  }
  // Hands the (emptied) blocks back to the pool.
  void releaseBlocks(BlockPool& pool) {
    for (Block& block : blocks_) pool.give(std::move(block));
    blocks_.clear();
  }

 private:
  static std::size_t perBlock(std::size_t block_bytes) { return block_bytes / sizeof(T); }
  std::byte* slot(std::size_t index) const {
    return blocks_[index / per_block_].get() + (index % per_block_) * sizeof(T);
  }

  std::vector<Block> blocks_;
  std::size_t size_ = 0;
  std::size_t per_block_ = 1;
};

template <class Tuple>
struct BlocksOf;
template <class... Ts>
struct BlocksOf<std::tuple<Ts...>> {
  using type = std::tuple<RecordBlocks<Ts>...>;
};

// Records of every type, taken from the queue together and committed in one transaction.
class Batch {
 public:
  [[nodiscard]] std::size_t size() const { return records_; }
  [[nodiscard]] bool empty() const { return records_ == 0; }
  [[nodiscard]] std::size_t textBytes() const { return text_bytes_; }

  template <class F>
  void forEachList(F&& visit) const {
    std::apply([&](const auto&... list) { (visit(list), ...); }, lists_);
  }

  void destroyRecords() {
    std::apply([](auto&... list) { (list.destroyRecords(), ...); }, lists_);
  }

 private:
  void swapLists(Batch& other) {
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (std::get<I>(lists_).swap(std::get<I>(other.lists_)), ...);
    }(std::make_index_sequence<std::tuple_size_v<decltype(lists_)>>{});
  }

  friend class RecordQueue;
  BlocksOf<RowRecords>::type lists_;
  std::size_t records_ = 0;
  std::size_t text_bytes_ = 0;
};

class RecordQueue {
 public:
  // The block size follows the budget: 64 KiB blocks, smaller for a small budget so that it still
  // holds a few blocks per record type.
  explicit RecordQueue(std::size_t budget_bytes);

  [[nodiscard]] std::size_t budgetBytes() const { return budget_bytes_; }
  // Memory held now: every pool block (pending, being committed, or free) and the queued text.
  [[nodiscard]] std::size_t heldBytes() const { return pool_.heldBytes() + text_bytes_; }
  [[nodiscard]] std::size_t peakBytes() const { return peak_bytes_; }
  // Bytes the pending records take (their blocks' share and their text): what triggers an early commit.
  [[nodiscard]] std::size_t pendingBytes() const { return pending_blocks_ * pool_.blockBytes() + pending_.text_bytes_; }
  [[nodiscard]] std::size_t pendingRecords() const { return pending_.records_; }
  // No record pending and none being committed.
  [[nodiscard]] bool idle() const { return pending_.records_ == 0 && in_flight_records_ == 0; }

  // Whether `record` fits in the budget now. Free blocks are given back to the system when its text
  // needs their room (all blocks stay in the pool after a burst of small records).
  template <class T>
  [[nodiscard]] bool makeRoom(const T& record) {
    const bool needs_block = std::get<RecordBlocks<T>>(pending_.lists_).needsBlock(pool_.blockBytes());
    const std::size_t text = textHeapBytes(record);
    auto needed = [&] {
      return heldBytes() + text + (needs_block && pool_.freeBlocks() == 0 ? pool_.blockBytes() : 0);
    };
    while (needed() > budget_bytes_ && pool_.freeBlocks() > (needs_block ? 1u : 0u)) pool_.releaseOneFree();
    return needed() <= budget_bytes_;
  }

  // Queues the record whether it fits or not (the caller checks makeRoom() first, or lets one
  // oversized record through an idle queue).
  template <class T>
  void push(T&& record) {
    auto& list = std::get<RecordBlocks<T>>(pending_.lists_);
    const std::size_t text = textHeapBytes(record);
    const bool new_block = list.needsBlock(pool_.blockBytes());
    list.push(std::move(record), pool_);
    if (new_block) ++pending_blocks_;
    ++pending_.records_;
    pending_.text_bytes_ += text;
    text_bytes_ += text;
    peak_bytes_ = std::max(peak_bytes_, heldBytes());
  }

  // Moves every pending record into `batch` (empty: released before) for committing. Its memory
  // stays counted until release().
  void takePending(Batch& batch);
  // Gives back the blocks and text of a committed batch whose records were destroyed.
  void release(Batch& batch);
  // Frees the pool's unused blocks (the writer is closing).
  void releaseFreeBlocks() { pool_.releaseFree(); }

 private:
  std::size_t budget_bytes_;
  BlockPool pool_;
  Batch pending_;
  std::size_t pending_blocks_ = 0;
  std::size_t text_bytes_ = 0;  // pending and being committed
  std::size_t in_flight_records_ = 0;  // taken for committing, not released yet
  std::size_t peak_bytes_ = 0;
};

}  // namespace torchscope::store
