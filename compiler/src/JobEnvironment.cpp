#include "torchscope/compiler/JobEnvironment.h"

#include <algorithm>
#include <cstdlib>

namespace torchscope::compiler {

std::string preloadWithCollector(std::string_view user_preload, std::string_view collector_library) {
  std::string preload;
  bool has_collector = false;
  // ld.so splits LD_PRELOAD at colons and spaces alike.
  std::size_t begin = 0;
  while (begin <= user_preload.size()) {
    const std::size_t end = std::min(user_preload.find_first_of(": ", begin), user_preload.size());
    const std::string_view entry = user_preload.substr(begin, end - begin);
    if (!entry.empty()) {
      has_collector = has_collector || entry == collector_library;
      preload += (preload.empty() ? "" : ":") + std::string(entry);
    }
    begin = end + 1;
  }
  if (!has_collector && !collector_library.empty()) {
    preload += (preload.empty() ? "" : ":") + std::string(collector_library);
  }
  return preload;
}

std::string jobPreload(std::string_view collector_library) {
  const char* user = std::getenv("LD_PRELOAD");
  return preloadWithCollector(user != nullptr ? user : "", collector_library);
}

}  // namespace torchscope::compiler
