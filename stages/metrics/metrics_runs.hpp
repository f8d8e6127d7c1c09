#pragma once

// Which files of a folder of text metrics are runs, and what a replay reads of each: every
// metrics file (is_text_metrics_file) is a run named by its path relative to the root, except
// that a trainer_state.json in a checkpoint-<N>/ folder belongs to the run of its parent's
// trainer_state.json: Hugging Face's Trainer writes one per checkpoint, and one beside them at
// the end. A replay reads the newest checkpoint's (highest N), then the one beside them, whose
// entries past the checkpoint are the only ones taken (each series takes a step once).

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/storage.hpp"
#include "stages/series/series_format.hpp"

namespace rulestream {

// The run of a metrics file: "out/checkpoint-500/trainer_state.json" -> "out/trainer_state.json";
// any other path is its own run.
std::string metrics_run_of(std::string_view path);

// The runs of a listing, in run-name order; files that are not metrics files are left out.
std::vector<RunFiles> group_metrics_runs(std::span<const StoredObject> listing);

// Folders of text metrics: this filter, these runs, MetricsRunLoader.
const SeriesFormat& text_metrics_series_format();

}  // namespace rulestream
