#pragma once

// A format whose jobs are series of scalars (and histograms) by run and tag: a TensorBoard
// logdir, a folder of text metrics (stages/metrics). What the series engine, inspect, the report
// and Python need of such a format, and nothing more: the file filter its sources announce by,
// which run a file belongs to, which files a replay reads in which order, and the loader stage
// that reads a run. Everything after the loader (naming, series, rules, the ledger) is shared.

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/file_filter.hpp"
#include "core/model/storage.hpp"
#include "stages/series/run_loader.hpp"

namespace rulestream {

struct RunFiles {
  std::string run;
  std::vector<StoredObject> files;  // in the order a replay reads them
};

struct SeriesFormat {
  // How messages name a job of the format, in short and in full, and its files: "logdir",
  // "TensorBoard logdir", "event files"; a metrics folder's: "metrics folder", "folder of text
  // metrics", "metrics files".
  std::string_view job_noun;
  std::string_view job_name;
  std::string_view file_noun;
  // What the format is called where a report or inspect names it: "TensorBoard", "text metrics".
  std::string_view format_label;
  FileFilter filter;
  // The run of a file the filter announces (its path relative to the root).
  std::string (*run_of)(std::string_view path) = nullptr;
  // The runs of a listing (paths relative to the root), in run-name order, each with the files
  // a replay reads; files of no run are left out.
  std::vector<RunFiles> (*group_runs)(std::span<const StoredObject> listing) = nullptr;
  // A fresh loader for the run of that name.
  std::unique_ptr<RunLoader> (*make_loader)(std::string run) = nullptr;
};

}  // namespace rulestream
