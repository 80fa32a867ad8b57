"""The capture window's toggle signal (SIGUSR2, `torchscope run --signal-toggle`) beside the job's own handler.

The collector installs its SIGUSR2 handler at start-up. A job that then sets its own with signal.signal() replaces
it at the C level; right after such a call the collector's handler is put back in front, chaining to the job's, so
that every SIGUSR2 both toggles the window and runs the job's handler (signal.getsignal() still answers the job's).
"""

import functools
import signal

from . import _settings


def install(abi):
    if not _settings.flag(_settings.WINDOW_SIGNAL):
        return
    original = signal.signal

    @functools.wraps(original)
    def set_handler(signalnum, handler):
        previous = original(signalnum, handler)
        if signalnum == signal.SIGUSR2:
            abi.window_rechain_signal()
        return previous

    signal.signal = set_handler
