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
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/model/shared_bytes.hpp"
#include "stages/format/tensorboard_event.hpp"
#include "stages/format/tensorboard_values.hpp"
#include "stages/series/run_loader.hpp"

namespace rulestream {

class RunReader final : public RunLoader {
 public:
  explicit RunReader(std::string run);

  const std::string& run() const override { return run_; }

  // check_replaced with the file as listed.
  void before_read(const Storage& storage, const StoredObject& file) override;
  // read(), whatever `last_bytes` says: a record the file ends inside is never read.
  void read_bytes(const std::string& file, const SharedBytes& bytes, std::uint64_t bytes_offset,
                  bool last_bytes, SeriesValueSink& sink) override;

  // Reads the records of `file` (its path relative to the logdir) held in `bytes`, the file's
  // content from `bytes_offset` on, starting where the last call stopped (resume_offset), which
  // must lie within [bytes_offset, bytes_offset + bytes.size()]. Each summary value goes to
  // `sink` in file order. Throws std::invalid_argument for bytes that do not cover the resume
  // offset; everything wrong with the file itself becomes a problem.
  void read(const std::string& file, const SharedBytes& bytes, std::uint64_t bytes_offset,
            SeriesValueSink& sink);

  // Before reading `file` as storage now lists it (`size`, `identity`: StoredObject's): when it
  // is no longer the file read so far (another identity, or shorter than what was read), it is
  // read again from its start, a checksum failure forgotten, and a problem says so. Returns
  // whether it was replaced.
  bool check_replaced(const std::string& file, std::uint64_t size, std::uint64_t identity);

  // The rest of `file`, from `offset` (its resume offset), is not read, for `why`: a problem
  // that lost values, and the file is dead.
  void abandon(const std::string& file, std::uint64_t offset, const std::string& why) override;

  // Where the next read of `file` starts: past its last whole record.
  std::uint64_t resume_offset(const std::string& file) const override;
  // Whether a checksum failure ended `file`: nothing more is read from it.
  bool file_dead(const std::string& file) const override;

  const std::deque<SeriesTag>& tags() const override { return tags_; }
  // The problems found so far, in the order found.
  const std::vector<SeriesProblem>& problems() const override { return problems_; }
  // The wall time of the first Event read (a writer's file_version record, written when it
  // opened its first file).
  std::optional<double> started() const override { return started_; }

 private:
  struct FileState {
    std::uint64_t resume_offset = 0;
    bool dead = false;
    std::uint64_t identity = 0;  // as last listed; 0 when storage cannot tell
  };

  void deliver(const std::string& file, std::uint64_t offset, const SharedBytes& payload,
               SeriesValueSink& sink);
  const SeriesTag& tag_for(const SummaryValueView& value, const SummaryReading& first);

  std::string run_;
  std::map<std::string, FileState, std::less<>> files_;
  // Looked up by the string_view a record holds: no string is built per value.
  struct TagHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view tag) const {
      return std::hash<std::string_view>{}(tag);
    }
  };

  std::deque<SeriesTag> tags_;
  std::unordered_map<std::string, std::size_t, TagHash, std::equal_to<>> tag_index_;
  std::vector<SeriesProblem> problems_;
  std::optional<double> started_;
  TensorBoardEvent event_;  // reused: decoding allocates nothing per record
};

}  // namespace rulestream
