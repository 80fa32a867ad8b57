#include "OptimizeArguments.h"

#include "Output.h"

namespace torchscope::cli {

void declareOptimizeOptions(CLI::App& app, OptimizeArguments& arguments) {
  app.add_option("model", arguments.model, "A TorchScript model saved with torch.jit.save")->required();
  app.add_option("--input", arguments.inputs, "Shape of one float32 input, e.g. 1,3,224,224 (repeat for several inputs)")
      ->required();
  app.add_option("--rounds", arguments.options.rounds, "Interleaved timing rounds")->default_val(5)->check(numberIn(1, 1000));
  app.add_option("--iterations", arguments.options.iterations, "Timed calls per variant and round")
      ->default_val(20)->check(numberIn(1, 100000));
  app.add_option("--warmup", arguments.options.warmup, "Untimed calls per variant first")->default_val(3)->check(numberIn(0, 1000));
  app.add_option("--threads", arguments.options.threads, "Intra-op threads (0: libtorch's default)")
      ->default_val(0)->check(numberIn(0, 1024));
  app.add_option("--format", arguments.format, "text or json")->default_val("text");
}

}  // namespace torchscope::cli
