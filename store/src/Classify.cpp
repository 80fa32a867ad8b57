#include "torchscope/store/Classify.h"

#include <algorithm>
#include <cctype>

namespace torchscope::store {

namespace {

bool contains(std::string_view text, std::string_view needle) { return text.find(needle) != std::string_view::npos; }

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
}

std::string_view withoutDash(std::string_view line) {
  line = trim(line);
  return !line.empty() && line.front() == '-' ? trim(line.substr(1)) : line;
}

// "0/1: L['x'] == 2" -> "0/1" (torch prefixes each reason with the failing entry's compile id), "" without one.
std::string_view compileIdOf(std::string_view raw) {
  const std::string_view line = withoutDash(raw);
  std::size_t i = 0;
  while (i < line.size() && (std::isdigit(static_cast<unsigned char>(line[i])) || line[i] == '/')) ++i;
  if (i > 0 && i + 1 < line.size() && line[i] == ':' && line[i + 1] == ' ') return line.substr(0, i);
  return {};
}

// "0/1: L['x'] == 2" -> "L['x'] == 2"
std::string_view withoutCompileId(std::string_view raw) {
  const std::string_view line = withoutDash(raw);
  const std::string_view id = compileIdOf(line);
  return id.empty() ? line : trim(line.substr(id.size() + 2));
}

bool isNumber(std::string_view token) {
  if (!token.empty() && (token.front() == '-' || token.front() == '+')) token.remove_prefix(1);
  return !token.empty() && (std::isdigit(static_cast<unsigned char>(token.front())) || token.front() == '.');
}

using Class = RecompileCauseKind;

struct Classified {
  Class type = Class::kOther;
  std::string detail;
};

// "tensor 'L['x']' size mismatch" -> "x"
std::string tensorName(std::string_view line) {
  const auto start = line.find("tensor '");
  if (start == std::string_view::npos) return "";
  const auto name_start = start + 8;
  const auto end = line.find("' ", name_start);
  return guardedSource(line.substr(name_start, end == std::string_view::npos ? std::string_view::npos : end - name_start));
}

// "L['x'].size()[0] <= 8" -> "x"
std::string sizedName(std::string_view line, std::string_view marker) {
  const auto at = line.find(marker);
  std::string_view before = line.substr(0, at);
  const auto start = before.find_last_of(" (,");
  if (start != std::string_view::npos) before.remove_prefix(start + 1);
  return guardedSource(before);
}

// "DispatchKeySet(CPU, BackendSelect, ...)" -> "CPU"
std::string_view firstDispatchKey(std::string_view text, std::string_view after) {
  const auto at = text.find(after);
  if (at == std::string_view::npos) return {};
  text.remove_prefix(at + after.size());
  const auto open = text.find('(');
  if (open == std::string_view::npos) return {};
  text.remove_prefix(open + 1);
  return trim(text.substr(0, text.find_first_of(",)")));
}

std::string globalStateName(std::string_view state) {
  state = trim(state);
  if (contains(state, "autocast")) return "autocast";
  if (contains(state, "grad_mode")) return "grad_mode";
  return std::string(state.substr(0, state.find(' ')));
}

Classified classifyLine(std::string_view raw) {
  const std::string_view line = withoutCompileId(raw);
  for (std::string_view marker : {"size mismatch", "stride mismatch", "rank mismatch"}) {
    if (contains(line, marker)) return {Class::kDynamicShape, tensorName(line)};
  }
  for (std::string_view marker : {".size()[", ".stride()["}) {
    if (contains(line, marker)) return {Class::kDynamicShape, sizedName(line, marker)};
  }
  if (contains(line, "dtype mismatch")) return {Class::kDtypeDevice, "dtype"};
  if (contains(line, "device mismatch") || contains(line, "device index mismatch")) return {Class::kDtypeDevice, "device"};
  if (contains(line, "requires_grad mismatch")) return {Class::kDtypeDevice, "requires_grad"};
  if (contains(line, "dispatch key set mismatch")) {
    // A different backend key (CPU -> Meta, CPU -> CUDA) is a device change; anything else a different tensor kind.
    if (firstDispatchKey(line, "expected") != firstDispatchKey(line, "actual")) return {Class::kDtypeDevice, "device"};
    return {Class::kTypeOrIdentity, "type"};
  }
  if (const auto at = line.find("GLOBAL_STATE changed:"); at != std::string_view::npos) {
    return {Class::kGlobalState, globalStateName(line.substr(at + 21))};
  }
  if (contains(line, "___check_global_state") || contains(line, "GLOBAL_STATE")) return {Class::kGlobalState, ""};
  if (contains(line, "CURRENT_DEVICE") || contains(line, "DEFAULT_DEVICE")) return {Class::kGlobalState, "default_device"};
  if (contains(line, "TORCH_FUNCTION_MODE_STACK") || contains(line, "torch_function_mode_stack")) {
    return {Class::kGlobalState, "torch_function_mode"};
  }
  if (const auto eq = line.find(" == "); eq != std::string_view::npos) {
    const std::string_view left = trim(line.substr(0, eq));
    std::string_view right = trim(line.substr(eq + 4));
    right = right.substr(0, right.find_first_of(" \t#"));
    const bool boolean = right == "True" || right == "False";
    if (boolean && left.size() >= 9 && left.substr(left.size() - 9) == ".training") {
      return {Class::kTrainingFlag, guardedSource(left.substr(0, left.size() - 9))};
    }
    // `len(x) == 3` guards a container's length: its cause is the container, not a scalar.
    if ((boolean || isNumber(right)) && left.rfind("len(", 0) != 0) return {Class::kPythonScalar, guardedSource(left)};
  }
  if (contains(line, "got deallocated")) return {Class::kTypeOrIdentity, "deallocated"};
  if (contains(line, "___check_type_id") || contains(line, "type(")) return {Class::kTypeOrIdentity, "type"};
  if (contains(line, "___check_obj_id") || contains(line, "id(") || contains(line, " is ")) {
    return {Class::kTypeOrIdentity, "identity"};
  }
  return {Class::kOther, ""};
}

}  // namespace

std::string_view recompileCauseName(RecompileCauseKind cause) {
  switch (cause) {
    case Class::kDynamicShape: return "dynamic-shape";
    case Class::kDtypeDevice: return "dtype-device";
    case Class::kGlobalState: return "global-state";
    case Class::kTrainingFlag: return "training-flag";
    case Class::kPythonScalar: return "python-scalar";
    case Class::kTypeOrIdentity: return "type-or-identity";
    case Class::kOther: break;
  }
  return "other";
}

std::optional<RecompileCauseKind> parseRecompileCause(std::string_view name) {
  for (const Class cause : {Class::kDynamicShape, Class::kDtypeDevice, Class::kGlobalState, Class::kTrainingFlag,
                            Class::kPythonScalar, Class::kTypeOrIdentity, Class::kOther}) {
    if (recompileCauseName(cause) == name) return cause;
  }
  return std::nullopt;
}

std::string guardedSource(std::string_view expression) {
  std::string out;
  out.reserve(expression.size());
  for (std::size_t i = 0; i < expression.size();) {
    const bool scope = (expression[i] == 'L' || expression[i] == 'G') && i + 2 < expression.size() &&
                       expression[i + 1] == '[' && (expression[i + 2] == '\'' || expression[i + 2] == '"') &&
                       (i == 0 || !(std::isalnum(static_cast<unsigned char>(expression[i - 1])) || expression[i - 1] == '_'));
    if (scope) {
      const char quote = expression[i + 2];
      const auto close = expression.find(std::string{quote, ']'}, i + 3);
      if (close != std::string_view::npos) {
        out.append(expression.substr(i + 3, close - i - 3));
        i = close + 2;
        continue;
      }
    }
    out.push_back(expression[i]);
    ++i;
  }
  return std::string(trim(out));
}

RecompileCause classifyRecompileCause(std::string_view guard_failures, const std::vector<RecompileCause>& earlier) {
  // Each cache entry's failure, most recently used entry first; lines without a compile id continue their entry.
  std::vector<RecompileCause> entries;
  std::vector<Classified> best;
  std::string_view current;
  while (!guard_failures.empty()) {
    const auto end = guard_failures.find('\n');
    const std::string_view line = guard_failures.substr(0, end);
    guard_failures = end == std::string_view::npos ? std::string_view{} : guard_failures.substr(end + 1);
    if (trim(line).empty()) continue;
    const std::string_view entry = compileIdOf(line);
    Classified classified = classifyLine(line);
    if (best.empty() || (!entry.empty() && entry != current)) {
      best.push_back(std::move(classified));
    } else if (classified.type < best.back().type) {
      best.back() = std::move(classified);
    }
    if (!entry.empty()) current = entry;
  }
  if (best.empty()) return {std::string(recompileCauseName(Class::kOther)), ""};
  for (const Classified& entry : best) entries.push_back({std::string(recompileCauseName(entry.type)), entry.detail});
  // An entry that fails on what an earlier recompile of the frame was for (the no_grad variant on the grad mode)
  // says nothing new; the first entry that fails on something else names this recompile's cause.
  for (const RecompileCause& entry : entries) {
    const bool known = std::any_of(earlier.begin(), earlier.end(), [&](const RecompileCause& cause) {
      return cause.cause == entry.cause && cause.detail == entry.detail;
    });
    if (!known) return entry;
  }
  return entries.front();
}

std::string classifyRecompile(std::string_view guard_failures) { return classifyRecompileCause(guard_failures).cause; }

bool isRecompileLimitHit(std::string_view message) {
  return contains(message, "recompile_limit") || contains(message, "cache_size_limit");
}

}  // namespace torchscope::store
