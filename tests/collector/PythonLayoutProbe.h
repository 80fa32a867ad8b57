/* What PythonLayoutProbe.c reads from CPython's internal headers. */
#pragma once

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ProbedLayout {
  unsigned long version_hex;
  size_t interp_threads_head, tstate_next, tstate_cframe, tstate_thread_id, tstate_native_id, cframe_current_frame;
  size_t frame_code, frame_previous, frame_prev_instr, frame_owner, code_size, code_first_traceable, code_adaptive;
  int owned_by_generator;
  size_t code_unit_size, first_traceable_size, size_size;
  size_t object_type, code_filename, code_name, code_line_table, code_first_line, text_length, text_state, ascii_data;
  unsigned text_compact_ascii_ready;
  size_t bytes_size, bytes_data;
};

struct ProbedLayout probedLayout(void);

#ifdef __cplusplus
}
#endif
