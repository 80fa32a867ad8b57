#include "TickBudget.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "Environment.h"

namespace torchscope::collector {

SampleBudget sampleBudgetFromEnvironment() {
  const std::string value = envString(std::string(settings::kSampleBudget.name).c_str());
  if (value.empty()) return {};
  char* end = nullptr;
  const double parsed = std::strtod(value.c_str(), &end);
  if (end == value.c_str() || *end != '\0' || !std::isfinite(parsed) || parsed < 0 || parsed > 100) {
    std::ostringstream message;
    message << settings::kSampleBudget.name << "=" << value
            << " is not a percentage from 0 to 100: the stack sampler keeps to " << kDefaultSampleBudgetPercent
            << " % of a core";
    return {kDefaultSampleBudgetPercent, message.str()};
  }
  return {parsed, ""};
}

TickBudget::TickBudget(std::chrono::nanoseconds period, double percent)
    : period_(period), percent_(percent), interval_(period) {}

void TickBudget::addCycle(std::int64_t cpu_ns, std::int64_t wall_ns) {
  cpu_ns = std::max<std::int64_t>(cpu_ns, 0);
  ++cycles_;
  cpu_ns_ += cpu_ns;
  average_cpu_ns_ += (static_cast<double>(cpu_ns) - average_cpu_ns_) / 8;
  if (interval_ > period_) ++stretched_;
  if (percent_ <= 0) return;
  const double share = percent_ / 100.0;
  allowance_ns_ = std::min(
      allowance_ns_ + share * static_cast<double>(std::max<std::int64_t>(wall_ns, 0)) - static_cast<double>(cpu_ns),
      static_cast<double>(kAllowance.count()));
  // The next tick is expected to cost the average: what the allowance lacks for it, the share earns over the interval.
  const double missing_ns = average_cpu_ns_ - allowance_ns_;
  const double needed_ns = missing_ns > 0 ? missing_ns / share : 0.0;
  const double longest_ns = static_cast<double>(kLongestInterval.count());
  interval_ = std::max(period_, std::chrono::nanoseconds(static_cast<std::int64_t>(std::min(needed_ns, longest_ns))));
}

}  // namespace torchscope::collector
