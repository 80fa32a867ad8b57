// Redirects the calls that loaded objects make to a function of another shared library, by rewriting the slots of
// their global offset tables (the PLT's jump slots, and the GLOB_DAT slots of code built with -fno-plt): the way a
// library loaded into a running process sees calls it cannot interpose by LD_PRELOAD (it was dlopen()ed after the
// program started, and exports nothing but C symbols).
#pragma once

#include <string>
#include <vector>

namespace torchscope::collector::libtorch {

struct Redirected {
  // The objects whose slots now point at the replacement ("" is the main program).
  std::vector<std::string> objects;
  // Slots found but not rewritten (the page could not be made writable), with the reason.
  std::vector<std::string> failures;
};

// Points every slot bound to `symbol` (a mangled or C name) at `replacement`, in every object loaded now except
// those whose path contains one of `skip` (the library defining the symbol, the caller's own library). The original
// function is what dlsym() finds, not the slot's content: a lazily bound slot holds a PLT stub. Objects loaded later
// are not seen.
Redirected redirectCalls(const char* symbol, void* replacement, const std::vector<std::string>& skip);

}  // namespace torchscope::collector::libtorch
