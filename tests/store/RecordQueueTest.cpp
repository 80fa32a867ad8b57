// The writer's queue on its own: what it counts against its budget, and that committed batches
// give their memory back for reuse.
#include <type_traits>

#include <gtest/gtest.h>

#include "RecordQueue.h"

namespace torchscope::store {
namespace {

constexpr std::size_t kBudget = 256 * 1024;

Step step(std::int64_t i) { return Step{1, 1, i, i * 10, i * 10 + 5, "marker"}; }

Kernel kernelNamed(std::string name) {
  Kernel k;
  k.name = std::move(name);
  return k;
}

// Fills the queue with steps until the next one would not fit; returns how many went in.
std::size_t fillWithSteps(RecordQueue& queue) {
  std::size_t pushed = 0;
  while (queue.makeRoom(step(0))) {
    queue.push(step(static_cast<std::int64_t>(pushed)));
    ++pushed;
  }
  return pushed;
}

TEST(RecordQueue, HoldsNoMoreThanItsBudget) {
  RecordQueue queue(kBudget);
  const std::size_t pushed = fillWithSteps(queue);
  EXPECT_LE(queue.heldBytes(), kBudget);
  EXPECT_EQ(queue.peakBytes(), queue.heldBytes());
  // Whole blocks: the budget is used but for less than one block of slack.
  EXPECT_GT(pushed * sizeof(Step), kBudget / 2);
  EXPECT_EQ(queue.pendingRecords(), pushed);
}

TEST(RecordQueue, LongTextCountsAgainstTheBudget) {
  RecordQueue queue(kBudget);
  const std::size_t before = queue.heldBytes();
  queue.push(kernelNamed(std::string(10'000, 'k')));
  EXPECT_GE(queue.heldBytes() - before, 10'000u);
  queue.push(kernelNamed("short"));  // inside std::string's own buffer: nothing more than its slot
  EXPECT_LT(queue.heldBytes() - before, 10'000u + 64 * 1024 + 1024);
  EXPECT_FALSE(queue.makeRoom(kernelNamed(std::string(kBudget, 'k')))) << "a name larger than the budget never fits";
}

TEST(RecordQueue, CommittedBatchesGiveTheirMemoryBack) {
  RecordQueue queue(kBudget);
  const std::size_t first = fillWithSteps(queue);
  const std::size_t held = queue.heldBytes();
  Batch batch;
  queue.takePending(batch);
  EXPECT_EQ(batch.size(), first);
  EXPECT_EQ(queue.pendingRecords(), 0u);
  EXPECT_FALSE(queue.idle()) << "the batch is being committed";
  EXPECT_FALSE(queue.makeRoom(step(0))) << "a batch being committed still holds its memory";

  std::int64_t expected = 0;
  bool in_order = true;
  batch.forEachList([&](const auto& list) {
    list.forEach([&](const auto& row) {
      if constexpr (std::is_same_v<std::decay_t<decltype(row)>, Step>) in_order = in_order && row.index == expected++;
    });
  });
  EXPECT_TRUE(in_order);
  EXPECT_EQ(expected, static_cast<std::int64_t>(first));

  batch.destroyRecords();
  queue.release(batch);
  EXPECT_TRUE(queue.idle());
  EXPECT_EQ(fillWithSteps(queue), first) << "the released blocks are reused";
  EXPECT_EQ(queue.heldBytes(), held);
}

// After a burst every block sits free in the pool, the whole budget: a record with long text still
// fits, in place of a free block.
TEST(RecordQueue, FreeBlocksMakeRoomForText) {
  RecordQueue queue(kBudget);
  fillWithSteps(queue);
  Batch batch;
  queue.takePending(batch);
  batch.destroyRecords();
  queue.release(batch);
  Kernel named = kernelNamed(std::string(20'000, 'k'));
  ASSERT_TRUE(queue.makeRoom(named));
  queue.push(std::move(named));
  EXPECT_LE(queue.heldBytes(), kBudget);
}

}  // namespace
}  // namespace torchscope::store
