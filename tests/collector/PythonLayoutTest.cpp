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
  EXPECT_EQ(table.object_type, probed.object_type);
  EXPECT_EQ(table.code_filename, probed.code_filename);
  EXPECT_EQ(table.code_name, probed.code_name);
  EXPECT_EQ(table.code_line_table, probed.code_line_table);
  EXPECT_EQ(table.code_first_line, probed.code_first_line);
  EXPECT_EQ(table.text_length, probed.text_length);
  EXPECT_EQ(table.text_state, probed.text_state);
  EXPECT_EQ(table.ascii_data, probed.ascii_data);
  EXPECT_EQ(table.text_compact_ascii_ready, probed.text_compact_ascii_ready);
  EXPECT_EQ(table.bytes_size, probed.bytes_size);
  EXPECT_EQ(table.bytes_data, probed.bytes_data);
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
  CodeHeader header;
  EXPECT_FALSE(readCodeHeader(kLayout311, 16, 32, header));
  // Readable memory that is not a code object (its "type" is not the one given).
  EXPECT_FALSE(readCodeHeader(kLayout311, reinterpret_cast<std::uintptr_t>(&value) - 8, 1, header));
  std::vector<RawThread> threads;
  EXPECT_FALSE(readThreads(kLayout311, 64, 0, threads));
}

// A line table of CPython 3.11's format (Objects/locations.md) made by hand: entries of each kind that moves the line.
TEST(PythonLayout, TheLineTableReaderFollowsEachKindOfEntry) {
  std::string table;
  const auto entry = [&](unsigned kind, unsigned units, std::initializer_list<unsigned char> rest) {
    table.push_back(static_cast<char>(0x80 | (kind << 3) | (units - 1)));
    for (unsigned char byte : rest) table.push_back(static_cast<char>(byte));
  };
  entry(13, 1, {0x04});                    // [0, 2): no columns, line +2 (svarint 4) -> 12
  entry(3, 2, {0x12});                     // [2, 6): short form, line kept -> 12
  entry(11, 1, {0x01, 0x05});              // [6, 8): one-line form, line +1 -> 13
  entry(14, 3, {0x03, 0x00, 0x01, 0x02});  // [8, 14): long form, line -1 (svarint 3) -> 12
  entry(15, 1, {});                        // [14, 16): no location
  entry(13, 1, {0x48, 0x03});              // [16, 18): line +100 (svarint 200 = 0x48 0x03) -> 112
  EXPECT_EQ(lineAtOffset(table, 10, 0), 12);
  EXPECT_EQ(lineAtOffset(table, 10, 4), 12);
  EXPECT_EQ(lineAtOffset(table, 10, 6), 13);
  EXPECT_EQ(lineAtOffset(table, 10, 12), 12);
  EXPECT_EQ(lineAtOffset(table, 10, 14), -1);
  EXPECT_EQ(lineAtOffset(table, 10, 16), 112);
  EXPECT_EQ(lineAtOffset(table, 10, 18), -1);                  // past the table
  EXPECT_EQ(lineAtOffset(std::string(1, '\x05'), 10, 0), -1);  // not an entry's first byte
}

}  // namespace
}  // namespace torchscope::collector
