#include "OptimizeArguments.h"

#include "Output.h"

namespace torchscope::cli {

void declareOptimizeOptions(CLI::App& app, OptimizeArguments& arguments) {
  app.add_option("model", arguments.words,
                 "An exported program saved with torch.export.save (.pt2), an AOTInductor package, or a TorchScript "
                 "model saved with torch.jit.save (deprecated by PyTorch for deployment; still measured); with "
                 "--export: -- and the job, e.g. -- python infer.py")
      ->required();
  app.add_flag(
      "--export", arguments.export_job,
      "Run the job, export the outermost module it calls with its first inputs (torch.export, strict=False; "
      "the batch dimension dynamic when the job's batch sizes vary) and measure that program against the job's own "
      "module, timed in the job's process once it has ended");
  app.add_option("--program", arguments.program,
                 "With --export: where the exported program is kept (default: the script's name with .pt2, in the "
                 "current folder); an existing file is never overwritten");
  app.add_option("--input", arguments.inputs,
                 "Shape of one input, e.g. 1,3,224,224 (repeat for several inputs); an exported program's dtypes are "
                 "its own, and without --input its example inputs are used (needed for TorchScript and packages)");
  app.add_option("--rounds", arguments.options.rounds, "Interleaved timing rounds")->default_val(5)->check(numberIn(1, 1000));
  app.add_option("--iterations", arguments.options.iterations, "Timed calls per variant and round")
      ->default_val(20)->check(numberIn(1, 100000));
  app.add_option("--warmup", arguments.options.warmup, "Untimed calls per variant first")->default_val(3)->check(numberIn(0, 1000));
  app.add_option("--threads", arguments.options.threads, "Intra-op threads (0: libtorch's default)")
      ->default_val(0)->check(numberIn(0, 1024));
  app.add_option("--format", arguments.format, "text or json")->default_val("text");
  app.add_option(
         "--variant", arguments.options.variants,
         "Exported programs: the variants to build (aoti, aoti-max-autotune, bf16, channels-last, int8; repeat; "
         "default all)")
      ->check(CLI::IsMember(compiler::kProgramVariants));
  app.add_option(
      "--workspace", arguments.workspace,
      "Exported programs: where compiled packages are cached by content hash (default ~/.cache/torchscope/optimize)");
  app.add_option("--compile-timeout", arguments.options.compile_timeout_s,
                 "Exported programs: seconds one variant may compile before it is reported as failed")
      ->default_val(900)
      ->check(numberIn(10, 86400));
  app.add_option("--seed", arguments.options.seed, "Seed of the random inputs")
      ->default_val(0)
      ->check(numberIn(0, 1 << 30));
}

}  // namespace torchscope::cli
