#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/model/collection.hpp"
#include "core/model/mode.hpp"
#include "core/model/reduction.hpp"
#include "core/model/tensor_value.hpp"
#include "stages/format/collections_file.hpp"
#include "stages/format/index_file.hpp"
#include "stages/format/tfrecord_writer.hpp"

namespace rulestream {

// Writes one worker's share of a trial exactly as smdebug lays it out: an event file and an
// index file per saved step, the collections file at close, and the end-of-job marker.
// Files are written under "<name>.tmp" and renamed into place, as smdebug does, so a reader
// never sees half a file unless it asks for that (see Options::atomic_rename).
// Records keep the order of the add_* calls, except that a tensor's saved reductions always
// precede its raw value, as smdebug's hooks write them: reductions added right after the raw
// tensor they belong to (nothing else in between) move before it. A name saved twice in a step
// gives two records, as smdebug can write.
// Misuse (add_* outside a step, a step begun twice) is std::logic_error; a file that cannot be
// written is StorageError naming it. Not thread-safe: one writer per worker.
class TrialWriter {
 public:
  struct Options {
    std::filesystem::path root;
    std::string worker = "worker_0";
    FooterStyle footer = FooterStyle::SmdebugPlaceholder;
    // smdebug never compresses; TensorFlow can. Index offsets then count uncompressed bytes.
    Compression compression = Compression::None;
    bool atomic_rename = true;  // false: write in place (to test readers against growing files)
    // smdebug writes "shape_payload" into every index file, empty at steps that saved no shape
    // (all the sample trials show it, whatever their collections' save_shape). false: only at
    // steps that called add_shape, to test readers against index files without the key.
    bool always_write_shape_payload = true;
  };

  explicit TrialWriter(Options options);

  // Starts the step's event file. Steps are global steps; mode_step counts within the mode.
  void begin_step(std::int64_t global_step, Mode mode, std::int64_t mode_step);
  // A raw tensor of the current step.
  void add_tensor(const std::string& name, const TensorValue& value);
  // A saved reduction of `name` (a 0-d tensor of the source dtype), written as smdebug does.
  void add_reduction(const std::string& name, ReductionKey key, const TensorValue& scalar);
  // A saved shape (collections with save_shape).
  void add_shape(const std::string& name, const Shape& shape);
  // Writes the step's event file (none when the step has no tensor) and then its index file.
  // The step is closed even when writing fails.
  void end_step();

  // Writes collections/000000000/<worker>_collections.json.
  void write_collections(const CollectionsFile& collections);
  // Writes training_job_end.ts (empty). Call once, from one worker, after all steps.
  void write_end_marker();

  const Options& options() const { return options_; }
  // Bytes written to event files so far.
  std::uint64_t event_bytes_written() const { return event_bytes_written_; }

 private:
  // One save of a tensor within the step: its reductions first, then its raw value.
  struct PendingTensor {
    std::string name;
    std::vector<std::pair<std::string, std::string>> reductions;  // record name, Event payload
    std::optional<std::string> raw;                               // Event payload
  };

  void require_step(const char* operation) const;
  void write_file(const std::filesystem::path& relative, std::string_view content);

  Options options_;
  std::vector<PendingTensor> pending_;
  bool in_step_ = false;
  std::int64_t step_ = 0;
  IndexFile index_;
  std::string events_;
  std::uint64_t event_bytes_written_ = 0;
};

}  // namespace rulestream
