#pragma once

// Reads the event files of one TensorBoard run as they are written: every summary value in file
// order, each with its tag's kind and plugin. A tag's plugin comes from the metadata of its
// first value (later values carry none), as in TensorBoard. Raw values only: duplicates and
// steps that go back (a run restarted from a checkpoint) are handed on as they are; what rules
// see of them is decided above this reader.
//
// Files are framed as TensorFlow frames them, both checksums checked. As TensorBoard's data
// server does, a checksum that fails ends the file (log text written into an event file fails
// the length checksum of the "record" after it); the problem names the file and offset, and the
// run's other files are still read; so does a length no record can have (2 GiB or more). A
// record cut short at the end is left for the next call (a file still being written). An Event
// that does not decode is reported and skipped. A file replaced under its name (another file
// renamed over it, or one cut shorter than what was read) is read again from its start.
//
// Not thread-safe: one thread at a time reads one run.

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/model/shared_bytes.hpp"
#include "stages/format/tensorboard_event.hpp"
#include "stages/format/tensorboard_values.hpp"

namespace rulestream {

// One tag of one run. Its address is stable for the reader's life: a sink may key on it.
struct TensorBoardTag {
  std::string run;
  std::string name;
  TagKind kind = TagKind::Other;  // the kind of its first value
  std::string plugin_name;        // from its first value's metadata; empty when none
  std::size_t index = 0;          // in order of first appearance in the run
};

// Receives each summary value. `reading.kind` is this value's own kind, which may differ from
// the tag's (a "scalars" tensor of two elements is Other).
class TensorBoardValueSink {
 public:
  virtual ~TensorBoardValueSink() = default;
  virtual void on_value(const TensorBoardTag& tag, std::int64_t step, double wall_time,
                        const SummaryReading& reading) = 0;
};

// A problem found in an event file; `message` names the file and the offset.
struct TensorBoardProblem {
  std::string file;  // relative to the logdir
  std::uint64_t offset = 0;
  std::string message;
  // Values the file holds were not read: a checksum or a length ended it, a record or a value
  // did not decode, the file could not be read. What rules found is then no all-clear. False
  // for what loses nothing written whole: a file that ends inside its last record, a file
  // replaced and read again.
  bool values_lost = true;
};

class RunReader {
 public:
  explicit RunReader(std::string run);

  const std::string& run() const { return run_; }

  // Reads the records of `file` (its path relative to the logdir) held in `bytes`, the file's
  // content from `bytes_offset` on, starting where the last call stopped (resume_offset), which
  // must lie within [bytes_offset, bytes_offset + bytes.size()]. Each summary value goes to
  // `sink` in file order. Throws std::invalid_argument for bytes that do not cover the resume
  // offset; everything wrong with the file itself becomes a problem.
  void read(const std::string& file, const SharedBytes& bytes, std::uint64_t bytes_offset,
            TensorBoardValueSink& sink);

  // Before reading `file` as storage now lists it (`size`, `identity`: StoredObject's): when it
  // is no longer the file read so far (another identity, or shorter than what was read), it is
  // read again from its start, a checksum failure forgotten, and a problem says so. Returns
  // whether it was replaced.
  bool check_replaced(const std::string& file, std::uint64_t size, std::uint64_t identity);

  // The rest of `file`, from `offset` (its resume offset), is not read, for `why`: a problem
  // that lost values, and the file is dead.
  void abandon(const std::string& file, std::uint64_t offset, const std::string& why);

  // Where the next read of `file` starts: past its last whole record.
  std::uint64_t resume_offset(const std::string& file) const;
  // Whether a checksum failure ended `file`: nothing more is read from it.
  bool file_dead(const std::string& file) const;

  const std::deque<TensorBoardTag>& tags() const { return tags_; }
  // The problems found so far, in the order found.
  const std::vector<TensorBoardProblem>& problems() const { return problems_; }

 private:
  struct FileState {
    std::uint64_t resume_offset = 0;
    bool dead = false;
    std::uint64_t identity = 0;  // as last listed; 0 when storage cannot tell
  };

  void deliver(const std::string& file, std::uint64_t offset, const SharedBytes& payload,
               TensorBoardValueSink& sink);
  const TensorBoardTag& tag_for(const SummaryValueView& value, const SummaryReading& first);

  std::string run_;
  std::map<std::string, FileState, std::less<>> files_;
  // Looked up by the string_view a record holds: no string is built per value.
  struct TagHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view tag) const {
      return std::hash<std::string_view>{}(tag);
    }
  };

  std::deque<TensorBoardTag> tags_;
  std::unordered_map<std::string, std::size_t, TagHash, std::equal_to<>> tag_index_;
  std::vector<TensorBoardProblem> problems_;
  TensorBoardEvent event_;  // reused: decoding allocates nothing per record
};

}  // namespace rulestream
