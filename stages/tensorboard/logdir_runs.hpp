#pragma once

// Which files of a listing are TensorBoard event files, and which run each belongs to: the rule
// of TensorBoard's own data server. Every folder holding a file whose basename contains
// "tfevents" is a run, named by its path relative to the logdir ("." for the logdir itself); a
// child folder is a run of its own. A run's files are read in file-name (byte) order.

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/storage.hpp"
#include "stages/series/series_format.hpp"

namespace rulestream {

// Whether `path`'s basename contains "tfevents", and it is not one of smdebug's own event
// files (events/<12 digits>/<12 digits>_<worker>.tfevents), which belong to a trial: the
// TensorBoard file filter's rule (is_tensorboard_event_file, core/model/file_filter.hpp).
bool is_event_file(std::string_view path);

// The run of an event file: its folder relative to the logdir, or "." at the top.
std::string run_of(std::string_view path);

// The runs of a listing (paths relative to the logdir), in run-name order, each run's files in
// file-name order; files that are not event files are left out.
std::vector<RunFiles> group_runs(std::span<const StoredObject> listing);

// TensorBoard logdirs as a series format: the rules above, and RunReader (run_reader.hpp) as
// the loader stage.
const SeriesFormat& tensorboard_series_format();

}  // namespace rulestream
