#include "core/model/mode.hpp"

#include <algorithm>
#include <cctype>
#include <string>

namespace rulestream {

std::string_view mode_name(Mode mode) {
  switch (mode) {
    case Mode::Train:
      return "TRAIN";
    case Mode::Eval:
      return "EVAL";
    case Mode::Predict:
      return "PREDICT";
    case Mode::Global:
      return "GLOBAL";
  }
  return "GLOBAL";
}

std::optional<Mode> mode_from_name(std::string_view name) {
  // Accept the Python spellings users paste: "modes.TRAIN", "ModeKeys.EVAL".
  if (const auto dot = name.rfind('.'); dot != std::string_view::npos) name.remove_prefix(dot + 1);
  std::string upper(name);
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  for (const Mode mode : kAllModes) {
    if (mode_name(mode) == upper) return mode;
  }
  return std::nullopt;
}

std::optional<Mode> mode_from_number(std::int64_t number) {
  if (number < 1 || number > 4) return std::nullopt;
  return static_cast<Mode>(number);
}

}  // namespace rulestream
