#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/model/exceptions.hpp"
#include "core/model/storage.hpp"
#include "core/model/trial_layout.hpp"
#include "stages/load/landing.hpp"

namespace rulestream {

// Reads a trial's index and collections files into landings for the trial store: the one loader
// behind the graph's loader node (a file at a time, as a source announces it) and
// TrialStore::refresh (a listing's new files at a time, in parallel). What cannot be read or
// parsed comes back as a TrialProblem naming the file (its message names it too) and never
// stops the other files. Storage must be safe to read from several threads (every Storage is).

// One index file read and parsed: its landing, or the problem that kept it out.
struct IndexFileLoad {
  std::optional<IndexLanding> landing;
  std::optional<TrialProblem> problem;
};

// Reads the index file at `path`, whose name `name` is (parse_step_file_name). A CSV index file
// (smdebug writes them on request; not read here) is a problem, as is one that cannot be read or
// parsed. `arrival` becomes the landing's.
IndexFileLoad load_index_file(const Storage& storage, const std::string& path,
                              const StepFileName& name,
                              std::optional<std::chrono::system_clock::time_point> arrival);

// The index files among `files` whose step `wanted_step` accepts, read and parsed in parallel;
// their arrival is their modification time. Other files are passed over, as smdebug does. The
// landings (and problems) keep the order of `files`.
std::pair<std::vector<IndexLanding>, std::vector<TrialProblem>> load_index_files(
    const Storage& storage, std::span<const StoredObject> files,
    const std::function<bool(std::int64_t step)>& wanted_step);

// One collections file: the worker it names, and, when `define` (no collections are known yet:
// the first file defines them, as in smdebug), the collections and worker count it holds. The
// problems: a file that cannot be read or parsed (then it defines nothing), or regexes in it
// that do not compile (left out of their collections: CollectionsFile::problems).
struct CollectionsFileLoad {
  CollectionsLanding landing;
  std::vector<TrialProblem> problems;
};

// Reads the collections file at `path` (a collections file's name: parse_collections_worker
// gives `worker`). When `define` is false nothing is read.
CollectionsFileLoad load_collections_file(const Storage& storage, const std::string& path,
                                          const std::string& worker, bool define);

}  // namespace rulestream
