#include "apps/report/downsample.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

namespace rulestream {
namespace {

bool same_value(double a, double b) {
  return a == b || (std::isnan(a) && std::isnan(b));
}

// Marks, in each bucket of consecutive points, the extremes and the non-finite ends.
void mark_bucket_extremes(std::span<const SeriesPoint> points, std::size_t buckets,
                          std::vector<bool>& keep) {
  const std::size_t n = points.size();
  for (std::size_t bucket = 0; bucket < buckets; ++bucket) {
    const std::size_t begin = bucket * n / buckets;
    const std::size_t end = (bucket + 1) * n / buckets;
    std::optional<std::size_t> lowest, highest, first_bad, last_bad;
    for (std::size_t i = begin; i < end; ++i) {
      const double value = points[i].value;
      if (!std::isfinite(value)) {
        if (!first_bad) first_bad = i;
        last_bad = i;
        continue;
      }
      if (!lowest || value < points[*lowest].value) lowest = i;
      if (!highest || value > points[*highest].value) highest = i;
    }
    for (const auto& index : {lowest, highest, first_bad, last_bad}) {
      if (index) keep[*index] = true;
    }
  }
}

}  // namespace

std::vector<SeriesPoint> downsample(std::span<const SeriesPoint> points, std::size_t buckets,
                                    std::span<const std::int64_t> keep_steps) {
  const std::size_t n = points.size();
  if (n == 0) return {};
  std::vector<bool> keep(n, false);
  std::vector<bool> forced(n, false);  // never dropped, even inside an equal run
  if (buckets == 0 || n <= 2 * buckets) {
    std::fill(keep.begin(), keep.end(), true);
  } else {
    mark_bucket_extremes(points, buckets, keep);
  }
  forced.front() = forced.back() = true;
  for (std::size_t i = 0; i < n; ++i) {
    if (std::binary_search(keep_steps.begin(), keep_steps.end(), points[i].step)) {
      forced[i] = true;
    }
  }
  // A point strictly inside a run of equal values adds nothing to the line: the segment from
  // the run's first point to its last draws it. So a run with any point kept keeps its two ends
  // (which may lie in other buckets) and only the points that must stay inside it.
  std::vector<SeriesPoint> kept;
  for (std::size_t run_begin = 0; run_begin < n;) {
    std::size_t run_end = run_begin + 1;  // one past the run
    while (run_end < n && same_value(points[run_end].value, points[run_begin].value)) ++run_end;
    const bool any_kept = std::any_of(keep.begin() + static_cast<std::ptrdiff_t>(run_begin),
                                      keep.begin() + static_cast<std::ptrdiff_t>(run_end),
                                      [](bool k) { return k; }) ||
                          std::any_of(forced.begin() + static_cast<std::ptrdiff_t>(run_begin),
                                      forced.begin() + static_cast<std::ptrdiff_t>(run_end),
                                      [](bool f) { return f; });
    for (std::size_t i = run_begin; i < run_end; ++i) {
      const bool run_end_point = i == run_begin || i + 1 == run_end;
      if (forced[i] || (any_kept && run_end_point)) kept.push_back(points[i]);
    }
    run_begin = run_end;
  }
  return kept;
}

}  // namespace rulestream
