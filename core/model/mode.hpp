#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace rulestream {

// smdebug's ModeKeys. The numbers are the ones written into event records.
enum class Mode : std::uint8_t { Train = 1, Eval = 2, Predict = 3, Global = 4 };

inline constexpr std::array<Mode, 4> kAllModes{Mode::Train, Mode::Eval, Mode::Predict,
                                               Mode::Global};

// "TRAIN", "EVAL", "PREDICT", "GLOBAL", as smdebug names them.
std::string_view mode_name(Mode mode);

// Accepts the names in any case ("TRAIN", "train", "modes.TRAIN").
std::optional<Mode> mode_from_name(std::string_view name);

// The ModeKeys value written in an event record's plugin data (1..4).
std::optional<Mode> mode_from_number(std::int64_t number);

}  // namespace rulestream
