#include "torchscope/compiler/JobEnvironment.h"

#include <algorithm>
#include <cstdlib>

#include "torchscope/compiler/FixCatalog.h"

extern char** environ;

namespace torchscope::compiler {

namespace {

std::string environmentValue(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  return value != nullptr ? value : "";
}

}  // namespace

std::string listWith(std::string_view existing, std::string_view entry, char separator) {
  if (entry.empty()) return std::string(existing);
  std::size_t begin = 0;
  while (begin <= existing.size()) {
    const std::size_t end = std::min(existing.find(separator, begin), existing.size());
    if (existing.substr(begin, end - begin) == entry) return std::string(existing);
    begin = end + 1;
  }
  return existing.empty() ? std::string(entry) : std::string(existing) + separator + std::string(entry);
}

JobEnvironment jobEnvironment(const JobRequest& request) {
  namespace settings = base::settings;
  JobEnvironment changes;
  const auto put = [&](const base::Setting& setting, const std::string& value) {
    changes.set[std::string(setting.name)] = value;
  };
  const auto clear = [&](const base::Setting& setting) { changes.unset.emplace_back(setting.name); };
  if (!request.collector_library.empty()) {
    changes.set["LD_PRELOAD"] = jobPreload(request.collector_library);
    put(settings::kOutput, request.store_path);
    clear(settings::kRootPid);  // the job's first process names the store, even under a traced parent
  }
  if (request.launcher) {
    // `python -m torchscope_compiler.launch`: after the user's own folders, which keep their precedence.
    changes.set["PYTHONPATH"] = listWith(environmentValue("PYTHONPATH"), request.compiler_python_dir, ':');
  }
  if (request.runtime_fixes) {
    if (request.runtime_fixes->empty()) {
      clear(settings::kFixes);
    } else {
      put(settings::kFixes, *request.runtime_fixes);
    }
  }
  const bool fixes = request.runtime_fixes ? !request.runtime_fixes->empty() : base::settingIsSet(settings::kFixes);
  // The runtime fixes' hook runs in every traced interpreter of the job (ranks, workers) once torch is in; under the
  // launcher on every run, so that each variant counts the hook's package as torchscope's code alike.
  if (fixes || request.launcher) {
    put(settings::kTorchImportHooks, listWith(base::settingText(settings::kTorchImportHooks), kRuntimeFixesHook, ','));
    put(settings::kTorchImportPath,
        listWith(base::settingText(settings::kTorchImportPath), request.compiler_python_dir, ':'));
  }
  if (request.command_line) {
    put(settings::kCommandLine, *request.command_line);
  } else {
    clear(settings::kCommandLine);  // the first process's own
  }
  for (const auto& [setting, value] : request.settings) {
    if (value.empty()) {
      changes.set.erase(std::string(setting->name));
      clear(*setting);
    } else {
      put(*setting, value);
    }
  }
  return changes;
}

std::vector<std::string> environmentWith(const JobEnvironment& changes) {
  std::vector<std::string> entries;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string text(*entry);
    const std::string key = text.substr(0, text.find('='));
    const bool replaced =
        changes.set.count(key) > 0 || std::find(changes.unset.begin(), changes.unset.end(), key) != changes.unset.end();
    if (!replaced) entries.push_back(text);
  }
  for (const auto& [key, value] : changes.set) entries.push_back(key + "=" + value);
  return entries;
}

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
  return preloadWithCollector(environmentValue("LD_PRELOAD"), collector_library);
}

}  // namespace torchscope::compiler
