#pragma once

// A strict reader of Prometheus' text exposition format (version 0.0.4), for tests that scrape
// /metrics: what Prometheus itself would refuse, this refuses too, with the line at fault.
//   - every line is a comment (# HELP / # TYPE / other), a sample, or empty; the text ends in a
//     line feed;
//   - metric and label names match [a-zA-Z_:][a-zA-Z0-9_:]* and [a-zA-Z_][a-zA-Z0-9_]*; label
//     values are double-quoted with only \\, \" and \n escaped; no label named twice;
//   - a family's HELP and TYPE come at most once each, before its samples; its samples are
//     contiguous; TYPE is counter, gauge, histogram, summary or untyped;
//   - a sample's name is its family's (histograms: _bucket, _sum, _count; summaries: _sum,
//     _count too); no two samples share name and labels;
//   - values are floats (NaN, +Inf, -Inf allowed), an optional timestamp an integer;
//   - counters are not negative, and (by the OpenMetrics convention the service keeps) a
//     counter's name ends in _total.

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace rulestream::testing {

struct PrometheusSample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0.0;
};

struct PrometheusFamily {
  std::string name;
  std::string type;  // "untyped" when no TYPE line
  std::string help;
  std::vector<PrometheusSample> samples;
};

struct PrometheusText {
  std::vector<PrometheusFamily> families;  // in the order they appear

  const PrometheusFamily* family(std::string_view name) const;
  // The value of the one sample named `name` with exactly these labels; std::out_of_range
  // (naming it) when there is none.
  double value(std::string_view name, const std::map<std::string, std::string>& labels = {}) const;
};

// std::invalid_argument "line N: ..." for anything the rules above refuse.
PrometheusText parse_prometheus_text(std::string_view text);

}  // namespace rulestream::testing
