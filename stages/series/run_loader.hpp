#pragma once

// What the series engine reads a run with, whatever the format: the loader stage of a series
// format (a TensorBoard run's event files, a metrics file's rows). A run's files are read window
// by window (read_run_file, series_reader.hpp): the loader consumes whole records from where it
// stopped and leaves a record the window ends inside for the next window, or the next look at
// a file still being written. Every value goes to a SeriesValueSink as a (tag, step, wall
// time, reading), so naming, series, rules, the report and inspect are shared by every format.
//
// Not thread-safe: one thread at a time reads one run.

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "core/model/shared_bytes.hpp"
#include "core/model/storage.hpp"
#include "stages/format/tensorboard_values.hpp"

namespace rulestream {

// One tag of one run. Its address is stable for the loader's life: a sink may key on it.
struct SeriesTag {
  std::string run;
  std::string name;
  TagKind kind = TagKind::Other;  // the kind of its first value
  std::string plugin_name;        // from its first value's metadata; empty when none
  std::size_t index = 0;          // in order of first appearance in the run
};

// Receives each value. `reading.kind` is this value's own kind, which may differ from the
// tag's (a "scalars" tensor of two elements is Other). `wall_time` is NaN where the format
// holds no time for the value (a CSV log without a time column).
class SeriesValueSink {
 public:
  virtual ~SeriesValueSink() = default;
  virtual void on_value(const SeriesTag& tag, std::int64_t step, double wall_time,
                        const SummaryReading& reading) = 0;
};

// A problem found in a run's file; `message` names the file and the offset.
struct SeriesProblem {
  std::string file;  // relative to the job's root
  std::uint64_t offset = 0;
  std::string message;
  // Values the file holds were not read: a checksum or a length ended it, a record or a value
  // did not decode, the file could not be read. What rules found is then no all-clear. False
  // for what loses nothing written whole: a file that ends inside its last record, a file
  // replaced and read again.
  bool values_lost = true;
};

class RunLoader {
 public:
  virtual ~RunLoader() = default;

  virtual const std::string& run() const = 0;

  // Before reading `file` as storage lists it now: when it is no longer what was read so far
  // (another file renamed over it, one cut shorter, a text log rewritten with a new header),
  // the loader decides where reading resumes, and says so in a problem where values may be
  // read twice. May read the file's first bytes; StorageError propagates.
  virtual void before_read(const Storage& storage, const StoredObject& file) = 0;

  // Reads the records of `file` held in `bytes` (the file's content from `bytes_offset` on)
  // from resume_offset(file), which lies within them. `last_bytes`: the bytes end where the
  // file ends and it will not grow (a replay), so a record they end inside is the file's last
  // one (a text log's final row without its newline). Each value goes to `sink` in file order.
  // Throws std::invalid_argument for bytes that do not cover the resume offset; everything
  // wrong with the file itself becomes a problem.
  virtual void read_bytes(const std::string& file, const SharedBytes& bytes,
                          std::uint64_t bytes_offset, bool last_bytes, SeriesValueSink& sink) = 0;

  // The rest of `file`, from `offset` (its resume offset), is not read, for `why`: a problem
  // that lost values, and the file is dead.
  virtual void abandon(const std::string& file, std::uint64_t offset, const std::string& why) = 0;

  // Where the next read of `file` starts: past its last whole record.
  virtual std::uint64_t resume_offset(const std::string& file) const = 0;
  // Whether nothing more is read from `file` (a checksum failure ended it).
  virtual bool file_dead(const std::string& file) const = 0;

  virtual const std::deque<SeriesTag>& tags() const = 0;
  // The problems found so far, in the order found.
  virtual const std::vector<SeriesProblem>& problems() const = 0;

  // When the run started, in the clock of its values' wall times, where its files say (a
  // TensorBoard run's first record; 0 for a log whose times are seconds since its start);
  // nullopt where they do not, or before anything was read.
  virtual std::optional<double> started() const = 0;
};

}  // namespace rulestream
