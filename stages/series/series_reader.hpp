#pragma once

// A job of a series format (a TensorBoard logdir, a metrics folder) read once, as it is now: for
// inspect, the report's charts, Python and tests. Watching one as it grows goes through the same
// loaders (read_run_file).

#include <cstdint>
#include <string>
#include <vector>

#include "core/model/memory_budget.hpp"
#include "core/model/storage.hpp"
#include "stages/format/tfrecord_reader.hpp"
#include "stages/series/run_loader.hpp"
#include "stages/series/series_format.hpp"

namespace rulestream {

struct SeriesReadOptions {
  // How much of a file is read at once: memory stays bounded by this (or by the largest
  // record, which is read whole) however large the files are.
  std::uint64_t window_bytes = std::uint64_t{16} << 20;
  // The largest record read (the memory budget, --max-memory): a larger one ends its file with
  // a problem rather than a window as large as it.
  std::uint64_t max_record_bytes = kDefaultMaxInflatedBytes;
  // The job's memory budget (--max-memory), shared with what else the job holds: a window grown
  // past window_bytes for a record that does not fit one takes its bytes from it, waiting for
  // another reader's (GrowingReservation), and a record it cannot make room for ends its file
  // with a problem. Null: only max_record_bytes bounds a window. The window_bytes each reading
  // thread holds are outside it (docs/architecture.md, "Limits").
  MemoryBudget* budget = nullptr;
};

struct SeriesJobRead {
  std::vector<std::string> runs;  // every run, in run-name order, values or not
  std::vector<SeriesProblem> problems;
  std::uint64_t files = 0;
  std::uint64_t bytes = 0;  // of the event files, as listed
};

// Reads what `file` holds past `reader`'s resume offset for it, window by window, up to its
// listed size or until a checksum ends it. With `final_size`, a file that ends inside a record
// is a problem (appended to `problems`); otherwise (a file being written) the rest waits for
// the next call. A file that is no longer the one read so far (RunLoader::before_read) is
// read again from its start. StorageError when the file cannot be read.
void read_run_file(const Storage& storage, const StoredObject& file, RunLoader& reader,
                   SeriesValueSink& sink, bool final_size, const SeriesReadOptions& options,
                   std::vector<SeriesProblem>& problems);

// Reads every file of `format` under `storage`'s root (its group_runs says which, and in what
// order), handing each value to `sink`. Nothing wrong with one file stops the others:
// a file that cannot be read, a checksum that fails, an Event that does not decode and a file
// that ends inside a record are problems naming the file (and offset). A listing that fails
// throws StorageError.
SeriesJobRead read_series_job(const Storage& storage, SeriesValueSink& sink,
                              const SeriesReadOptions& options, const SeriesFormat& format);

}  // namespace rulestream
