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

// "... size mismatch at index 1. expected 5, actual 1" -> true: torch specialises sizes 0 and 1 even with
// dynamic=True, so a call of another such size is another kind of call (a decode step of one token).
bool specialisedSizes(std::string_view guard) {
  for (std::string_view marker : {"expected ", "actual "}) {
    const auto at = guard.find(marker);
    if (at == std::string_view::npos) continue;
    std::string_view number = guard.substr(at + marker.size());
    number = number.substr(0, number.find_first_not_of("0123456789"));
    if (number == "0" || number == "1") return true;
  }
  return false;
}

// A failure on a tensor's size that torch's automatic dynamic shapes make dynamic in the entry it compiles next: not
// a stride or rank (another layout, another kind of tensor), not sizes 0 or 1.
bool sizeTorchMakesDynamic(const RecompileCause& failure) {
  const bool size = contains(failure.guard, "size mismatch") || contains(failure.guard, ".size()[");
  return failure.cause == recompileCauseName(Class::kDynamicShape) && size && !specialisedSizes(failure.guard);
}

// Whether `entry`'s size failure no longer tells what changed: that entry already recompiled for the tensor's size,
// and the entry compiled then (dynamic in it, otherwise as the old one) fails now on something else, which the old
// entry shares. Without the compiled entry's id, the earlier recompile alone decides.
bool outgrown(const RecompileCause& entry, const std::vector<RecompileCause>& earlier,
              const std::vector<RecompileCause>& entries) {
  for (const RecompileCause& cause : earlier) {
    if (entry.entry.empty() || cause.entry != entry.entry || cause.detail != entry.detail ||
        !sizeTorchMakesDynamic(cause)) {
      continue;
    }
    const auto successor = std::find_if(entries.begin(), entries.end(), [&](const RecompileCause& other) {
      return !cause.compiled.empty() && other.entry == cause.compiled;
    });
    if (successor == entries.end()) {
      if (cause.compiled.empty()) return true;
      continue;
    }
    if (successor->cause != cause.cause || successor->detail != cause.detail) return true;
  }
  return false;
}

// The failure of the entry that could have served the call (Classify.h).
RecompileCause judgedEntry(std::string_view guard_failures, const std::vector<RecompileCause>& earlier) {
  // Each cache entry's failure, most recently used entry first; lines without a compile id continue their entry.
  std::vector<RecompileCause> entries;
  std::vector<Classified> classes;
  std::string_view current;
  while (!guard_failures.empty()) {
    const auto end = guard_failures.find('\n');
    const std::string_view line = guard_failures.substr(0, end);
    guard_failures = end == std::string_view::npos ? std::string_view{} : guard_failures.substr(end + 1);
    if (trim(line).empty()) continue;
    const std::string_view entry = compileIdOf(line);
    Classified classified = classifyLine(line);
    const bool next_entry = classes.empty() || (!entry.empty() && entry != current);
    if (next_entry || classified.type < classes.back().type) {
      if (next_entry) {
        entries.emplace_back();
        classes.emplace_back();
      }
      entries.back().entry = std::string(entry.empty() ? current : entry);
      entries.back().guard = std::string(withoutCompileId(line));
      classes.back() = std::move(classified);
    }
    if (!entry.empty()) current = entry;
  }
  if (entries.empty()) {
    RecompileCause other;
    other.cause = recompileCauseName(Class::kOther);
    return other;
  }
  for (std::size_t i = 0; i < entries.size(); ++i) {
    entries[i].cause = std::string(recompileCauseName(classes[i].type));
    entries[i].detail = std::move(classes[i].detail);
  }
  // The entry of the call's kind that fails on a size alone: what changed is that size.
  for (const RecompileCause& entry : entries) {
    if (sizeTorchMakesDynamic(entry) && !outgrown(entry, earlier, entries)) return entry;
  }
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

RecompileCause classifyRecompileCause(std::string_view guard_failures, const std::vector<RecompileCause>& earlier,
                                      std::string_view compiled) {
  RecompileCause cause = judgedEntry(guard_failures, earlier);
  cause.compiled = std::string(compiled);
  return cause;
}

std::string compileIdText(std::int64_t frame_id, std::int64_t frame_compile_id) {
  return std::to_string(frame_id) + "/" + std::to_string(frame_compile_id);
}

std::string classifyRecompile(std::string_view guard_failures) { return classifyRecompileCause(guard_failures).cause; }

bool isRecompileLimitHit(std::string_view message) {
  return contains(message, "recompile_limit") || contains(message, "cache_size_limit");
}

}  // namespace torchscope::store
