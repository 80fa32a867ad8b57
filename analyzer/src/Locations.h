// Where a finding points: the user's own line, chosen at analysis time from the stacks the store
// keeps, with the run's user-code roots (store/UserCode.h) widened by `advise --user-code`.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>

#include "torchscope/store/UserCode.h"

namespace torchscope::analyzer {

struct Location {
  std::string file;
  std::int64_t line = -1;
  std::string function;
  [[nodiscard]] bool known() const { return !file.empty(); }
  bool operator==(const Location&) const = default;
};

// The user's function of a Dynamo resume function: "torch_dynamo_resume_in_forward_at_41" -> "forward".
std::string displayFunction(std::string_view name);

// torch.compile of a torch.nn module or of one of torch's own functions compiles torch's wrapper around it (`inner` in
// torch/_dynamo/external_utils.py), a frame whose name says nothing to the user: name it by its torch.compile call.
bool isCompileWrapper(const Location& frame);
// "the code compiled at train.py:36" for such a wrapper with a known torch.compile call, "torch's compile wrapper
// `inner` (...)" without one, else "`forward` (model.py:10)".
std::string compiledFrameText(const Location& frame, const Location& entry);

Location locationOf(const store::SourceFrame& frame);
// The innermost user frame of a stored stack, or an unknown location.
Location innermostUserLocation(const std::vector<store::SourceFrame>& stack, const store::CodeRoots& code);
// The user's call into a compiled region: the innermost user frame outside torch.compile's outermost wrapper on the
// stack (a frame compiled inside the region, e.g. after a graph break, is called from code that is itself compiled);
// the innermost user frame when the stack shows no wrapper.
Location regionCallLocation(const std::vector<store::SourceFrame>& stack, const store::CodeRoots& code);
// The innermost frame when it is not the user's (torch's or a library's own line), or an unknown location.
Location libraryFrame(const std::vector<store::SourceFrame>& stack, const store::CodeRoots& code);

// The installed package a library file belongs to: ".../site-packages/transformers/trainer.py" -> "transformers";
// "" for a file outside site-packages and dist-packages.
std::string libraryPackage(std::string_view file);

// {"file", "line", "function"} for evidence; null for an unknown location.
nlohmann::json locationJson(const Location& location);
// "model.py:41 (forward)" for messages, "an unknown line" when unknown.
std::string describe(const Location& location);

}  // namespace torchscope::analyzer
