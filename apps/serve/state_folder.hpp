#pragma once

// Where a service keeps what it must not lose (the dead letters of sinks that name no file of
// their own): a folder it is given, not whatever folder it was started from.

#include <filesystem>
#include <vector>

#include "engine/graph/pipeline_config.hpp"

namespace rulestream {

// $STATE_DIRECTORY (systemd's StateDirectory=), else $XDG_STATE_HOME/rulestream, else
// ~/.local/state/rulestream; empty when none of these can be told (no HOME).
std::filesystem::path default_state_folder();

// Makes the folder (and its parents) when it is missing; std::invalid_argument naming it when
// that fails or it is no folder.
void make_state_folder(const std::filesystem::path& folder);

// Each webhook and Alertmanager sink that names no dead-letter file gets FOLDER/dead-letters.jsonl.
void place_dead_letters(std::vector<SinkConfig>& sinks, const std::filesystem::path& folder);

}  // namespace rulestream
