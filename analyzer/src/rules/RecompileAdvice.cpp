#include "RecompileAdvice.h"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <string_view>
#include <system_error>

#include "torchscope/analyzer/FixIds.h"
#include "torchscope/base/JsonText.h"

namespace torchscope::analyzer {

namespace {

std::string here(const Location& location, const std::string& fallback) {
  return location.known() ? formatLocation(location.file, location.line) : fallback;
}

// "`forward` (model.py:37)", "`forward` (model.py:37) and 3 other frames" or "the code compiled at train.py:36"
std::string framesText(const RecompileGroup& group) {
  if (group.frames.empty()) return "the compiled function";
  std::string text = compiledFrameText(group.frames.front().frame, group.entry);
  if (group.frames.size() > 1) {
    text += fmt::format(" and {} other frame{}", group.frames.size() - 1, group.frames.size() == 2 ? "" : "s");
  }
  return text;
}

// The subject of a title or a first sentence: "`forward`" or "The code compiled at train.py:36".
std::string mainFunction(const RecompileGroup& group) {
  if (group.frames.empty()) return "The compiled function";
  const Location& frame = group.frames.front().frame;
  if (isCompileWrapper(frame) && group.entry.known()) {
    return "The code compiled at " + formatLocation(group.entry.file, group.entry.line);
  }
  return "`" + frame.function + "`";
}

// The failing guard that caused the recompiles, else the first one of their texts, without torch's "0/1: " compile
// id: "tensor 'x' size mismatch at index 0. expected 3, actual 4".
std::string firstGuard(const RecompileGroup& group) {
  if (!group.guard.empty()) return group.guard.substr(0, group.guard.find('\n'));
  for (const auto& example : group.guard_examples) {
    const auto guards = base::parseJson(example);
    if (!guards.is_array() || guards.empty() || !guards.front().is_string()) continue;
    std::string guard = guards.front().get<std::string>();
    guard = guard.substr(0, guard.find('\n'));
    const auto colon = guard.find(": ");
    if (colon != std::string::npos && guard.find_first_not_of("0123456789/") == colon) guard = guard.substr(colon + 2);
    return guard;
  }
  return "";
}

std::string costText(const RecompileGroup& group, const Facts& facts) {
  return fmt::format("{} of compilation ({} of the run)", formatSeconds(group.compile_s),
                     formatPercent(facts.fraction(group.compile_s)));
}

// "transformers' torch.compile call at .../trainer.py:2113" for a framework's call, "torch.compile at train.py:28".
std::string compileCallText(const RecompileGroup& group) {
  if (!group.framework_entry) return "torch.compile at " + describe(group.entry);
  const std::string package = libraryPackage(group.entry.file);
  return fmt::format("{}torch.compile call at {}", package.empty() ? "a library's " : package + "'s ",
                     describe(group.entry));
}

// " The region was compiled by torch.compile at train.py:28 and called from train.py:39.", leaving out the line
// the finding already points at.
std::string whereText(const RecompileGroup& group) {
  const bool entry = group.entry.known() && !(group.entry == group.location);
  const bool call = group.call_site.known() && !(group.call_site == group.location);
  if (entry && call) {
    return fmt::format(" The region was compiled by {} and called from {}.", compileCallText(group),
                       describe(group.call_site));
  }
  if (entry) return fmt::format(" The region was compiled by {}.", compileCallText(group));
  if (call) return fmt::format(" It was called from {}.", describe(group.call_site));
  return "";
}

// torch's wrapper takes the user's arguments as `*args`: "args[0]" is the first argument of the user's call.
std::string tensorText(const RecompileGroup& group) {
  if (group.detail.empty()) return "an input";
  static constexpr std::array<std::string_view, 5> kOrdinals = {"first", "second", "third", "fourth", "fifth"};
  const std::string_view detail = group.detail;
  if (!group.frames.empty() && isCompileWrapper(group.frames.front().frame) && detail.starts_with("args[") &&
      detail.ends_with(']')) {
    const std::string_view digits = detail.substr(5, detail.size() - 6);
    std::size_t index = 0;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
    if (error == std::errc{} && end == digits.data() + digits.size() && !digits.empty()) {
      return index < kOrdinals.size() ? fmt::format("its {} argument", kOrdinals[index])
                                      : fmt::format("its argument {}", index + 1);
    }
  }
  return "`" + group.detail + "`";
}

// A framework that compiles the model itself (a Trainer, accelerate) takes no dynamic=True from the user's code:
// the sizes come from how batches are padded, or `torchscope fix` makes that call dynamic at run time.
std::string dynamicShapeFix(const RecompileGroup& group) {
  if (group.framework_entry) {
    const std::string package = libraryPackage(group.entry.file);
    return fmt::format(
        "{} calls torch.compile itself ({}), so there is no torch.compile call of yours to change: give the batches "
        "a few fixed sizes where they are made (a data collator's pad_to_multiple_of, padding to a fixed max_length, "
        "a DataLoader with drop_last=True), or let `torchscope fix` apply dynamic-shapes, which makes {} call "
        "compile with dynamic=True at run time",
        package.empty() ? "The library" : package, here(group.entry, ""), package.empty() ? "that" : package + "'s");
  }
  // The entry is the user's line also when it calls a module's compile() (torch's, or a library's that forwards).
  return fmt::format("{}, or mark the varying dimension with torch._dynamo.mark_dynamic(tensor, dim) before the call",
                     group.entry.known()
                         ? "pass dynamic=True to the torch.compile call at " + here(group.entry, "") +
                               " (model.compile(dynamic=True) where that line calls a module's compile())"
                         : std::string("compile with dynamic=True"));
}

RecompileAdvice dynamicShape(const RecompileGroup& group, const Facts& facts) {
  const std::string tensor = tensorText(group);
  return {fmt::format("{} recompiled {} for new input sizes", mainFunction(group), times(group.count)),
          fmt::format("torch.compile specialised {} to the sizes of its first inputs; a new size of {} ({}) failed its "
                      "guards, so it was compiled again {}: {}.{}",
                      framesText(group), tensor, firstGuard(group), times(group.count), costText(group, facts),
                      whereText(group)),
          {fix::kDynamicShapes, dynamicShapeFix(group)}};
}

RecompileAdvice pythonScalar(const RecompileGroup& group, const Facts& facts) {
  const std::string value = group.detail.empty() ? "a Python number" : "`" + group.detail + "`";
  const std::string cost = fmt::format("{} recompiled {}, {}.", mainFunction(group), times(group.count),
                                       costText(group, facts));
  const std::string source = here(group.value_source, "");
  // Stores without a value source (imported traces) still name the optimizer's param_groups in the guard.
  if (group.value_kind == "optimizer" ||
      (group.value_kind.empty() && group.detail.find("param_groups") != std::string::npos)) {
    const bool lr = group.detail.find("'lr'") != std::string::npos || group.detail.find("\"lr\"") != std::string::npos;
    const std::string optimizer = source.empty() ? "The optimizer" : "The optimizer created at " + source;
    const std::string at = source.empty() ? "" : " at " + source;
    return {
        fmt::format("{} recompiled {}: the optimizer's {} is a Python float", mainFunction(group),
                    times(group.count), lr ? "learning rate" : "hyperparameter"),
        fmt::format("{} keeps {} as a Python float, and its compiled step guards the value ({}); every change (an LR "
                    "scheduler's step) compiles the step again. {}{}",
                    optimizer, value, firstGuard(group), cost, whereText(group)),
        lr ? FixProposal{fix::kTensorLr,
                         fmt::format("create the optimizer{} with a tensor learning rate (lr=torch.tensor(0.01)); "
                                     "torch's compiled-optimizer tutorial pairs it with an LR scheduler this way",
                                     at)}
           : FixProposal{"", fmt::format("give the optimizer{} this hyperparameter as a tensor", at)}};
  }
  // A Python bool read in the compiled code (peft's adapter switch, a config flag): one compile per value.
  if (const std::string guard = firstGuard(group); guard.ends_with(" == True") || guard.ends_with(" == False")) {
    return {fmt::format("{} recompiled {}: the flag {} switched between calls", mainFunction(group), times(group.count),
                        value),
            fmt::format("The compiled code reads the Python bool {} and is specialised to its value ({}){}; switching "
                        "it (a context manager such as peft's disable_adapter(), a config flag) compiles the code "
                        "again for the other value. Once per value is expected; more means the flag flips around the "
                        "compiled call. {}{}",
                        value, guard, source.empty() ? "" : ", set at " + source, cost, whereText(group)),
            {"",
             "accept one compile per value of the flag, or run the other value through the uncompiled module "
             "(keep a reference to it before torch.compile); a switch that changes every call belongs in a tensor "
             "(torch.where) rather than a Python bool"}};
  }
  if (group.value_kind == "attribute") {
    return {fmt::format("{} recompiled {}: {} changes between calls", mainFunction(group), times(group.count), value),
            fmt::format("torch.compile treats {} as a constant and guards its value ({}); it changes at {}, so each "
                        "new value compiles the code again (integer attributes of an nn.Module are static). {}{}",
                        value, firstGuard(group), source, cost, whereText(group)),
            {"", fmt::format("keep the changing number out of the compiled code: make {} a tensor (a registered buffer) "
                             "or, for an nn.Module integer, set torch._dynamo.config.allow_unspec_int_on_nn_module = True",
                             value)}};
  }
  if (group.value_kind == "item") {
    return {fmt::format("{} recompiled {}: a number read with .item() is passed in", mainFunction(group),
                        times(group.count)),
            fmt::format("{} is a Python number read from a tensor with .item() (or .tolist()) at {}; the compiled code "
                        "guards its value ({}), so each new value compiles it again. {}{}",
                        value, source, firstGuard(group), cost, whereText(group)),
            {"", fmt::format("pass the tensor itself instead of calling .item() at {} (the compiled code then reads "
                             "it as data), or read it inside the compiled function with "
                             "torch._dynamo.config.capture_scalar_outputs = True",
                             source)}};
  }
  const bool global = group.value_kind == "global";
  return {fmt::format("{} recompiled {}: the Python number {} changes between calls", mainFunction(group),
                      times(group.count), value),
          fmt::format("The compiled code guards the value of {} ({}){}; each new value compiles it again. {}{}",
                      value, firstGuard(group),
                      source.empty() ? "" : (global ? ", a global read at " : ", passed at ") + source,
                      cost, whereText(group)),
          {fix::kDynamicShapes, "pass the changing number as a tensor, or compile with dynamic=True so that numbers "
                                "become symbolic"}};
}

RecompileAdvice dtypeDevice(const RecompileGroup& group, const Facts& facts) {
  const std::string what = group.detail == "device"          ? "an input moved to another device"
                           : group.detail == "requires_grad" ? "an input's requires_grad flag changed"
                                                             : "an input's dtype changed";
  const std::string fix = group.detail == "device"
                              ? "keep the inputs of the compiled code on one device (move them before the call)"
                          : group.detail == "requires_grad"
                              ? "pass inputs with the same requires_grad every call (detach consistently, or compile "
                                "training and evaluation separately)"
                              : "give the compiled code one dtype: convert the input before the call (e.g. x.float()), "
                                "or let torch.autocast choose precisions instead of casting inputs";
  return {fmt::format("{} recompiled {}: {}", mainFunction(group), times(group.count), what),
          fmt::format("The compiled code is specialised to the dtype and device of its inputs; {} ({}) at {}, so it "
                      "was compiled again {}: {}.{}",
                      what, firstGuard(group), describe(group.location), times(group.count), costText(group, facts),
                      whereText(group)),
          {"", fix}};
}

RecompileAdvice globalState(const RecompileGroup& group, const Facts& facts) {
  if (group.detail == "grad_mode") {
    return {fmt::format("{} recompiled {}: called with gradients on and off", mainFunction(group), times(group.count)),
            fmt::format("The compiled code is specialised to the grad mode it was compiled in; calling it under "
                        "torch.no_grad() or torch.inference_mode() (or back with gradients on) at {} compiled it "
                        "again: {}. Once per mode is expected; more means the mode flips around the compiled call.{}",
                        describe(group.location), costText(group, facts), whereText(group)),
            {"", "evaluate with the uncompiled module (keep a reference to it before torch.compile) or accept one "
                 "compile per grad mode; do not switch grad mode around the compiled call inside the loop"}};
  }
  if (group.detail == "autocast") {
    return {fmt::format("{} recompiled {}: called inside and outside torch.autocast", mainFunction(group),
                        times(group.count)),
            fmt::format("The compiled code is specialised to the autocast state; calling it with autocast switched at "
                        "{} compiled it again: {}.{}",
                        describe(group.location), costText(group, facts), whereText(group)),
            {"", "call the compiled code always inside (or always outside) torch.autocast, or put the autocast "
                 "context inside the compiled function"}};
  }
  const std::string state = group.detail.empty() ? "torch's global state" : "the global setting `" + group.detail + "`";
  return {fmt::format("{} recompiled {}: {} changed between calls", mainFunction(group), times(group.count), state),
          fmt::format("The compiled code is specialised to {}; it changed before the call at {}, so the code was "
                      "compiled again: {}.{}",
                      state, describe(group.location), costText(group, facts), whereText(group)),
          {"", "set it once before the first call (torch.use_deterministic_algorithms, torch.set_default_dtype, "
               "torch.set_default_device, ...) and keep it"}};
}

RecompileAdvice trainingFlag(const RecompileGroup& group, const Facts& facts) {
  const std::string module = group.detail.empty() ? "a module" : "`" + group.detail + "`";
  return {fmt::format("{} recompiled {}: a module switched between train() and eval()", mainFunction(group),
                      times(group.count)),
          fmt::format("The compiled code reads the training flag of {} and is specialised to it; calling it after "
                      "model.train()/model.eval() at {} compiled it again: {}. Once per mode is expected; more "
                      "means the mode flips between calls.{}",
                      module, describe(group.location), costText(group, facts), whereText(group)),
          {"", "evaluate with the uncompiled module (keep a reference to it before torch.compile), or switch modes "
               "once, not around every call"}};
}

RecompileAdvice typeOrIdentity(const RecompileGroup& group, const Facts& facts) {
  const std::string what = group.detail == "deallocated"
                               ? "an object it was specialised to was freed and replaced"
                               : group.detail == "identity" ? "a different object (function, module) was passed"
                                                            : "an argument's type changed";
  const std::string fix = group.detail == "deallocated"
                              ? "create the objects the compiled code uses (model, optimizer, functions) once and reuse "
                                "them"
                          : group.detail == "identity"
                              ? "pass the same object every call, not a new lambda, partial or module instance"
                              : "pass arguments of one type to the compiled code";
  return {fmt::format("{} recompiled {}: {}", mainFunction(group), times(group.count), what),
          fmt::format("The compiled code guards the type and identity of what it uses; {} ({}) at {}, so it was "
                      "compiled again {}: {}.{}",
                      what, firstGuard(group), describe(group.location), times(group.count), costText(group, facts),
                      whereText(group)),
          {"", fix}};
}

}  // namespace

std::string times(std::int64_t count) {
  if (count == 1) return "once";
  if (count == 2) return "twice";
  return fmt::format("{} times", count);
}

RecompileAdvice recompileAdvice(const RecompileGroup& group, const Facts& facts) {
  if (group.cause == "dynamic-shape") return dynamicShape(group, facts);
  if (group.cause == "python-scalar") return pythonScalar(group, facts);
  if (group.cause == "dtype-device") return dtypeDevice(group, facts);
  if (group.cause == "global-state") return globalState(group, facts);
  if (group.cause == "training-flag") return trainingFlag(group, facts);
  if (group.cause == "type-or-identity") return typeOrIdentity(group, facts);
  return {fmt::format("{} recompiled {}", mainFunction(group), times(group.count)),
          fmt::format("A guard of {} failed ({}), so it was compiled again {}: {}.{}", framesText(group),
                      firstGuard(group), times(group.count), costText(group, facts), whereText(group)),
          {"", "read the guard failures in the evidence and keep the guarded value stable between calls"}};
}

RecompileAdvice limitAdvice(const RecompileGroup& group, const FixProposal& cause_fix) {
  return {fmt::format("{} hit the recompile limit and now runs eagerly", mainFunction(group)),
          fmt::format("{} recompiled ({}) until torch.compile's recompile limit was hit; from then on it runs without "
                      "compilation. Remove the cause rather than raising the limit.{}",
                      framesText(group), group.cause, whereText(group)),
          cause_fix};
}

}  // namespace torchscope::analyzer
