// Serves a ranking model compiled ahead of time by AOTInductor (a .pt2 package, export_ranker.py) from C++ alone:
// requests of alternating batch sizes, seeded, each scored by the package's run(), timed by the server itself.
//
//   aoti_server PACKAGE.pt2 [--requests N] [--batch-sizes 1,16,64] [--features F] [--device cpu|cuda] [--marker]
//               [--runner]
// A request takes its features from host memory to the package's device and its scores back (the copies are no-ops
// on the CPU). --device is the package's (export_ranker.py --device). --marker wraps each request in
// RECORD_USER_SCOPE("torchscope.request"): what a server does when a request is more than one call of the package;
// on a GPU that also makes the request cover its kernels, since run() returns once they are queued. --runner calls
// the package's AOTIModelContainerRunner (get_runner()) instead of the loader, as a program on a model .so does.
// Prints one JSON line: requests, latency p50/p99 and their sum in ms, and a checksum of the top-scored items.
// Exit codes: 0 done, 1 the package failed, 2 bad arguments.
#include <ATen/record_function.h>
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

namespace {

struct Options {
  std::string package;
  long requests = 200;
  std::vector<long> batch_sizes = {1, 16, 64};
  long features = 64;
  std::string device = "cpu";
  bool marker = false;
  bool runner = false;
};

bool parseSizes(const char* text, std::vector<long>* sizes) {
  sizes->clear();
  for (const char* at = text; *at != '\0';) {
    char* end = nullptr;
    const long size = std::strtol(at, &end, 10);
    if (end == at || size <= 0) return false;
    sizes->push_back(size);
    at = *end == ',' ? end + 1 : end;
    if (*end != ',' && *end != '\0') return false;
  }
  return !sizes->empty();
}

bool parse(int argc, char** argv, Options* options) {
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--requests") == 0 && has_value) {
      options->requests = std::strtol(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--batch-sizes") == 0 && has_value) {
      if (!parseSizes(argv[++i], &options->batch_sizes)) return false;
    } else if (std::strcmp(argv[i], "--features") == 0 && has_value) {
      options->features = std::strtol(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--device") == 0 && has_value) {
      options->device = argv[++i];
    } else if (std::strcmp(argv[i], "--marker") == 0) {
      options->marker = true;
    } else if (std::strcmp(argv[i], "--runner") == 0) {
      options->runner = true;
    } else if (options->package.empty() && argv[i][0] != '-') {
      options->package = argv[i];
    } else {
      return false;
    }
  }
  return !options->package.empty() && options->requests > 0 && options->features > 0 &&
         (options->device == "cpu" || options->device == "cuda");
}

double percentile(std::vector<double> values, double share) {
  std::sort(values.begin(), values.end());
  const auto at = static_cast<std::size_t>(share * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(at, values.size() - 1)];
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!parse(argc, argv, &options)) {
    std::fprintf(stderr,
                 "usage: aoti_server PACKAGE.pt2 [--requests N] [--batch-sizes 1,16,64] [--features F] "
                 "[--device cpu|cuda] [--marker] [--runner]\n");
    return 2;
  }
  try {
    torch::NoGradGuard no_grad;
    torch::inductor::AOTIModelPackageLoader loader(options.package);
    torch::manual_seed(0);
    const torch::Device device(options.device);
    const auto serve = [&](const at::Tensor& features) {
      const std::vector<at::Tensor> inputs = {features.to(device)};
      const std::vector<at::Tensor> scores = options.runner ? loader.get_runner()->run(inputs) : loader.run(inputs);
      return scores.at(0).to(torch::kCPU);
    };
    std::vector<double> latency_ms;
    std::int64_t checksum = 0;
    for (long request = 0; request < options.requests; ++request) {
      const long batch = options.batch_sizes[static_cast<std::size_t>(request) % options.batch_sizes.size()];
      const auto started = std::chrono::steady_clock::now();
      at::Tensor scores;
      if (options.marker) {
        RECORD_USER_SCOPE("torchscope.request");
        scores = serve(torch::randn({batch, options.features}));
      } else {
        scores = serve(torch::randn({batch, options.features}));
      }
      latency_ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count());
      checksum += scores.argmax(1).sum().item<std::int64_t>();
    }
    double total_ms = 0;
    for (const double ms : latency_ms) total_ms += ms;
    std::printf("{\"requests\": %ld, \"p50_ms\": %.4f, \"p99_ms\": %.4f, \"total_ms\": %.4f, \"checksum\": %lld}\n",
                options.requests, percentile(latency_ms, 0.5), percentile(latency_ms, 0.99), total_ms,
                static_cast<long long>(checksum));
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "aoti_server: %s\n", error.what());
    return 1;
  }
}
