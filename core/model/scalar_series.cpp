#include "core/model/scalar_series.hpp"

#include <array>
#include <utility>

namespace rulestream {
namespace {

constexpr std::array<std::pair<SeriesRole, std::string_view>, 6> kRoleNames{{
    {SeriesRole::Loss, "loss"},
    {SeriesRole::GradientNorm, "gradient_norm"},
    {SeriesRole::LearningRate, "learning_rate"},
    {SeriesRole::Gradient, "gradient"},
    {SeriesRole::ReinforcementLoss, "reinforcement_loss"},
    {SeriesRole::Other, "other"},
}};

}  // namespace

std::string_view series_role_name(SeriesRole role) {
  for (const auto& [known, name] : kRoleNames) {
    if (known == role) return name;
  }
  return "other";
}

std::optional<SeriesRole> series_role_from_name(std::string_view name) {
  for (const auto& [role, known] : kRoleNames) {
    if (known == name) return role;
  }
  return std::nullopt;
}

std::string SeriesInfo::display_name() const {
  const std::string named = figure.empty() ? tag : tag + " (" + figure + ")";
  if (run.empty() || run == ".") return named;
  return run + ": " + named;
}

}  // namespace rulestream
