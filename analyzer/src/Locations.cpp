#include "Locations.h"

#include <fmt/format.h>

#include <algorithm>

#include "Rules.h"

namespace torchscope::analyzer {

std::string displayFunction(std::string_view name) {
  constexpr std::string_view kResume = "torch_dynamo_resume_in_";
  if (name.substr(0, kResume.size()) != kResume) return std::string(name);
  const std::string_view rest = name.substr(kResume.size());
  const auto at = rest.rfind("_at_");
  return std::string(at == std::string_view::npos ? rest : rest.substr(0, at));
}

bool isCompileWrapper(const Location& frame) {
  return frame.function == "inner" && frame.file.ends_with("/_dynamo/external_utils.py");
}

std::string compiledFrameText(const Location& frame, const Location& entry) {
  if (isCompileWrapper(frame) && entry.known()) return "the code compiled at " + formatLocation(entry.file, entry.line);
  return fmt::format("{}`{}` ({})", isCompileWrapper(frame) ? "torch's compile wrapper " : "", frame.function,
                     formatLocation(frame.file, frame.line));
}

Location locationOf(const store::SourceFrame& frame) { return {frame.file, frame.line, displayFunction(frame.function)}; }

Location innermostUserLocation(const std::vector<store::SourceFrame>& stack, const store::CodeRoots& code) {
  const store::SourceFrame* frame = store::innermostUserFrame(stack, code);
  return frame != nullptr ? locationOf(*frame) : Location{};
}

Location regionCallLocation(const std::vector<store::SourceFrame>& stack, const store::CodeRoots& code) {
  const auto wrapper = std::find_if(stack.begin(), stack.end(), [](const store::SourceFrame& frame) {
    return frame.file.ends_with("/_dynamo/eval_frame.py") && (frame.function == "compile_wrapper" || frame.function == "_fn");
  });
  const std::vector<store::SourceFrame> outside(stack.begin(), wrapper);
  const Location call = innermostUserLocation(outside, code);
  return call.known() ? call : innermostUserLocation(stack, code);
}

Location libraryFrame(const std::vector<store::SourceFrame>& stack, const store::CodeRoots& code) {
  if (stack.empty() || code.isUserFile(stack.back().file)) return {};
  return locationOf(stack.back());
}

std::string libraryPackage(std::string_view file) {
  for (std::string_view folder : {"/site-packages/", "/dist-packages/"}) {
    const auto at = file.rfind(folder);
    if (at == std::string_view::npos) continue;
    const std::string_view rest = file.substr(at + folder.size());
    const std::string_view name = rest.substr(0, rest.find('/'));
    return std::string(name.ends_with(".py") ? name.substr(0, name.size() - 3) : name);
  }
  return "";
}

nlohmann::json locationJson(const Location& location) {
  if (!location.known()) return nullptr;
  return {{"file", location.file}, {"line", location.line}, {"function", location.function}};
}

std::string describe(const Location& location) {
  if (!location.known()) return "an unknown line";
  const std::string where = formatLocation(location.file, location.line);
  return location.function.empty() ? where : where + " (" + location.function + ")";
}

}  // namespace torchscope::analyzer
