#pragma once

// The plots of an smdebug trial: each loss per mode over global steps (the rules' firings
// marked), and per layer, for gradients, weights and biases, a small chart of its whole-job
// abs-mean and max, its NaN and Inf count, and, with several workers, the spread of the
// workers' abs-means. Series are downsampled (downsample.hpp), keeping `keep_steps`.

#include <cstdint>
#include <span>
#include <vector>

#include "apps/report/job_report.hpp"
#include "trial/api/trial.hpp"

namespace rulestream {

// Reads every saved step of the tensors it plots (their reductions: those the pipeline landed
// are cached, others are computed once). A figure that cannot be had at a step (a worker that
// saved neither a value nor that reduction) is left out of its curve, not drawn as zero.
std::vector<Chart> smdebug_charts(const Trial& trial, std::span<const std::int64_t> keep_steps);

}  // namespace rulestream
