"""Training steps: where they end is kept by the collector library (collector/src/StepMarks.h): an optimizer's step
ends one (its post-hook, or the compiled region that steps it), else zero_grad(), else backward() when no optimizer
is used at all; torchscope.step() markers replace them. A job with none of these has requests (requests.py).

Each step end is one call of the library's builtins: it runs after every optimizer step, cold (a step's kernels have
pushed the interpreter's code and data out of the caches), where each Python call and attribute costs about a
microsecond. The bridge's own work at a step end (compiled regions, the op census, memory beyond the host RSS) runs
in Python only from the step the bridge asked for (`Marks.follow_up_from`), and outside the capture window only when
it asked for those too; other step ends answer None.
"""

NEVER = 1 << 62  # a step index no job reaches: no follow-up


class Marks:
    """The library's step builtins (torchscope_step_builtins), by name:

    optimizer_stepped(optimizer_id), zero_grad(optimizer_id), backward(), marker() mark the events and answer None,
    or (index, start_ns, end_ns, stored) for a step that ended with its follow-up due (stored: inside the capture
    window); zero_grad() and backward() answer False once they can never mark again in this process (an optimizer
    or markers took over: the bridge unhooks them); request(start_ns, items, marked) answers likewise for the request
    held before this one (False once requests can never be steps: requests.py unhooks); flush_request() at exit;
    request_items() -> "first_index:items,..."; next_step_index(); follow_up_from(index, outside_window);
    reset_after_fork()."""

    def __init__(self, builtins):
        (self.optimizer_stepped, self.zero_grad, self.backward, self.marker, self.request, self.flush_request,
         self.request_items, self.next_step_index, self.follow_up_from, self.reset_after_fork) = builtins
