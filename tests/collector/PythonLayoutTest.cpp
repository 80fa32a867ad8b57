// The stack sampler's table of CPython 3.11's layout (PythonMemory.h) against the interpreter's internal headers, and
// the reader against the running interpreter of this test (an embedded one): its own thread's frames.
#include <gtest/gtest.h>

#include "PythonLayoutProbe.h"
#include "PythonMemory.h"

namespace torchscope::collector {
namespace {

TEST(PythonLayout, TheTableOfPython311MatchesItsHeaders) {
  const ProbedLayout probed = probedLayout();
  if (((probed.version_hex >> 24) & 0xff) != 3 || ((probed.version_hex >> 16) & 0xff) != 11) {
    GTEST_SKIP() << "the headers are not CPython 3.11's";
  }
  const InterpreterLayout& table = kLayout311;
  EXPECT_EQ(table.interp_threads_head, probed.interp_threads_head);
  EXPECT_EQ(table.tstate_next, probed.tstate_next);
  EXPECT_EQ(table.tstate_cframe, probed.tstate_cframe);
  EXPECT_EQ(table.tstate_thread_id, probed.tstate_thread_id);
  EXPECT_EQ(table.tstate_native_id, probed.tstate_native_id);
  EXPECT_EQ(table.cframe_current_frame, probed.cframe_current_frame);
  EXPECT_EQ(table.frame_code, probed.frame_code);
  EXPECT_EQ(table.frame_previous, probed.frame_previous);
  EXPECT_EQ(table.frame_prev_instr, probed.frame_prev_instr);
  EXPECT_EQ(table.frame_owner, probed.frame_owner);
  EXPECT_EQ(table.code_size, probed.code_size);
  EXPECT_EQ(table.code_first_traceable, probed.code_first_traceable);
  EXPECT_EQ(table.code_adaptive, probed.code_adaptive);
  EXPECT_EQ(table.owned_by_generator, probed.owned_by_generator);
  // The widths the reader assumes: two-byte code units, an int _co_firsttraceable, an 8-byte ob_size.
  EXPECT_EQ(probed.code_unit_size, 2u);
  EXPECT_EQ(probed.first_traceable_size, sizeof(int));
  EXPECT_EQ(probed.size_size, sizeof(std::int64_t));
}

TEST(PythonLayout, UnreadableMemoryFailsInsteadOfFaulting) {
  std::int64_t value = 42;
  std::int64_t copy = 0;
  EXPECT_TRUE(readOwnMemory(reinterpret_cast<std::uintptr_t>(&value), &copy, sizeof(copy)));
  EXPECT_EQ(copy, 42);
  EXPECT_FALSE(readOwnMemory(0, &copy, sizeof(copy)));
  EXPECT_FALSE(readOwnMemory(8, &copy, sizeof(copy)));  // the first page is never mapped
  CodeShape shape;
  EXPECT_FALSE(readCodeShape(kLayout311, 16, shape));
  std::vector<RawThread> threads;
  EXPECT_FALSE(readThreads(kLayout311, 64, threads));
}

}  // namespace
}  // namespace torchscope::collector
