// Trains a small MLP on synthetic data with a host-device sync per step (loss.item()), the most
// common stall in real training loops.
//
//   libtorch_train [--steps N] [--batch N] [--cpu]
// Exit codes: 0 done, 2 bad arguments.
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

struct Options {
  long steps = 50;
  long batch = 256;
  bool force_cpu = false;
};

bool parse(int argc, char** argv, Options* options) {
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--steps") == 0 && has_value) {
      options->steps = std::strtol(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--batch") == 0 && has_value) {
      options->batch = std::strtol(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--cpu") == 0) {
      options->force_cpu = true;
    } else {
      return false;
    }
  }
  return options->steps > 0 && options->batch > 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!parse(argc, argv, &options)) {
    std::fprintf(stderr, "usage: libtorch_train [--steps N] [--batch N] [--cpu]\n");
    return 2;
  }
  const bool cuda = !options.force_cpu && torch::cuda::is_available();
  const torch::Device device = cuda ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU);
  torch::manual_seed(0);

  torch::nn::Sequential model(torch::nn::Linear(64, 256), torch::nn::ReLU(), torch::nn::Linear(256, 256),
                              torch::nn::ReLU(), torch::nn::Linear(256, 10));
  model->to(device);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));

  std::vector<double> step_ms;
  double last_loss = 0;
  for (long step = 0; step < options.steps; ++step) {
    const auto started = std::chrono::steady_clock::now();
    // Built on the CPU and copied each step, as a naive data loader does.
    const auto inputs = torch::randn({options.batch, 64}).to(device);
    const auto targets = torch::randint(0, 10, {options.batch}).to(device);
    optimizer.zero_grad();
    const auto loss = torch::nn::functional::cross_entropy(model->forward(inputs), targets);
    loss.backward();
    optimizer.step();
    last_loss = loss.item<double>();  // blocks until the GPU is done
    step_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count());
  }
  std::sort(step_ms.begin(), step_ms.end());
  std::printf("{\"device\": \"%s\", \"steps\": %ld, \"batch\": %ld, \"median_step_ms\": %.3f, \"loss\": %.4f}\n",
              cuda ? "cuda" : "cpu", options.steps, options.batch, step_ms[step_ms.size() / 2], last_loss);
  return 0;
}
