#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/model/storage.hpp"
#include "engine/graph/trial_presence.hpp"
#include "stages/series/series_store.hpp"

namespace rulestream::python {

// A TensorBoard logdir (or a folder of text metrics, read the same way: docs/text-metrics.md)
// read once, as it is when read, for the Python module's TensorBoardTrial
// (rulestream/tensorboard.py). Runs and files as `rulestream inspect` reads them
// (stages/series/series_reader.hpp, docs/tensorboard.md), into the series store every
// series format shares (stages/series/series_store.hpp): a scalar or histogram tag as
// TensorBoard shows it (a value at a step at or below the last one kept drops the kept values
// from that step on, so steps rise strictly and each has one value); a value whose own kind is
// not its tag's (a "scalars" tensor of two elements) left out, as TensorBoard leaves it out.
// Immutable once read: safe to read from any thread.
class TensorBoardLogdir {
 public:
  // Reads every file of `format` (TensorBoard or TextMetrics) under `storage`'s root. A listing
  // that fails throws StorageError; anything wrong with a file is one of problems().
  explicit TensorBoardLogdir(const Storage& storage, TrialFormat format = TrialFormat::TensorBoard);

  const std::string& path() const { return path_; }
  const std::vector<std::string>& runs() const { return runs_; }  // run-name order
  // Scalar and histogram tags, by run, then in order of first appearance in the run.
  const std::vector<const StoredSeries*>& series() const { return series_; }
  // The other tags (text, images, audio, hparams, ...): listed, with their kind, not read.
  const std::vector<const StoredSeries*>& other_tags() const { return other_tags_; }
  // One line each, naming the file (relative to the logdir) and the offset.
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  std::string path_;
  std::vector<std::string> runs_;
  SeriesStore store_;
  std::vector<const StoredSeries*> series_;      // in store_
  std::vector<const StoredSeries*> other_tags_;  // in store_
  std::vector<std::string> problems_;
};

// The series format `path` (a folder or an s3:// prefix) holds, rather than an smdebug trial: a
// TensorBoard logdir, or a folder of text metrics. nullopt for an smdebug trial and for a path
// that holds nothing yet (opened as an smdebug trial, which says what is wrong).
std::optional<TrialFormat> series_format_held(const Storage& storage);

}  // namespace rulestream::python
