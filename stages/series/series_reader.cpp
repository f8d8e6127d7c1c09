#include "stages/series/series_reader.hpp"

#include <algorithm>
#include <memory>
#include <optional>
#include <tuple>
#include <vector>

#include "core/model/exceptions.hpp"
#include "core/model/growing_reservation.hpp"

namespace rulestream {

namespace {

// One window of `file` from `offset`: read into `buffer` (reused from window to window: a
// replay's memory stays one window however large the logdir) where storage reads into the
// caller's buffers (a local file), else as storage hands it out (S3: one ranged GET).
SharedBytes read_window(const Storage& storage, const std::string& path,
                        const RandomAccessFile* file, std::uint64_t offset, std::uint64_t length,
                        std::shared_ptr<std::vector<std::byte>>& buffer) {
  if (file == nullptr) return storage.read_range(path, offset, length);
  // A buffer a previous window's bytes still hold (a value kept by a consumer) is left to them.
  if (!buffer || buffer.use_count() > 1) buffer = std::make_shared<std::vector<std::byte>>();
  if (buffer->size() < length) buffer->resize(length);
  const std::size_t got = file->read_at(offset, std::span(buffer->data(), length));
  return SharedBytes::of_recycled_copy(buffer, std::span(buffer->data(), got));
}

// Holds `bytes` of `budget` in `grown` (made at the first call), waiting for other readers' bytes
// when the budget says so. False when the budget cannot give them even alone.
bool take_window(MemoryBudget& budget, std::uint64_t bytes,
                 std::optional<GrowingReservation>& grown) {
  if (!grown) grown.emplace(budget);
  for (;;) {
    if (grown->bytes() >= bytes) return true;
    switch (grown->grow(static_cast<std::size_t>(bytes - grown->bytes()))) {
      case GrowingReservation::Grant::Granted:
        return true;
      case GrowingReservation::Grant::Refused:
        return false;
      case GrowingReservation::Grant::Yield:
        grown->yield_and_wait();  // gave everything back: take it all again
        break;
    }
  }
}

}  // namespace

void read_run_file(const Storage& storage, const StoredObject& file, RunLoader& reader,
                   SeriesValueSink& sink, bool final_size, const SeriesReadOptions& options,
                   std::vector<SeriesProblem>& problems) {
  const std::uint64_t first_window =
      std::max<std::uint64_t>(std::min(options.window_bytes, options.max_record_bytes), 64);
  std::uint64_t window = first_window;
  // A window grown past the first, for a record larger than it, holds budget bytes
  // (options.budget).
  std::optional<GrowingReservation> grown;
  reader.before_read(storage, file);
  if (reader.resume_offset(file.path) >= file.size || reader.file_dead(file.path)) return;
  const std::unique_ptr<RandomAccessFile> random_access = storage.open_random_access(file.path);
  std::shared_ptr<std::vector<std::byte>> buffer;
  const auto too_large = [&](std::uint64_t offset) {
    reader.abandon(file.path, offset,
                   "a record larger than the memory budget of " +
                       std::to_string(options.max_record_bytes) +
                       " bytes (--max-memory); the rest of the file is not read");
  };
  for (;;) {
    const std::uint64_t offset = reader.resume_offset(file.path);
    if (offset >= file.size || reader.file_dead(file.path)) return;
    // A grown window's bytes come from the budget before it is read (the last window's buffer is
    // gone by now: nothing is held uncounted while this waits for another reader's bytes).
    if (options.budget != nullptr && window > first_window &&
        !take_window(*options.budget, window - first_window, grown)) {
      return too_large(offset);
    }
    // No more than the listing says is there: a followed logdir's file of a few KiB must not
    // cost a window's buffer (16 MiB, zeroed) at every poll. What was written since the
    // listing is read at the next one.
    const std::uint64_t length = std::min(window, file.size - offset);
    const SharedBytes bytes =
        read_window(storage, file.path, random_access.get(), offset, length, buffer);
    reader.read_bytes(file.path, bytes, offset, final_size && offset + bytes.size() >= file.size,
                      sink);
    if (reader.file_dead(file.path)) return;
    if (reader.resume_offset(file.path) > offset) continue;
    if (bytes.size() < window) {
      // No whole record in what is left of the listed size: the file ends inside one (or is
      // still being written).
      if (!final_size) return;
      // A writer stopped in the middle of its last record: nothing whole is lost.
      problems.push_back({file.path, offset,
                          file.path + ": record at offset " + std::to_string(offset) +
                              ": the file ends inside it (" + std::to_string(bytes.size()) +
                              " bytes left); they are not read",
                          false});
      return;
    }
    // A record larger than the window: read it whole in a larger one, within the budget.
    if (window >= options.max_record_bytes) return too_large(offset);
    window = std::min(window * 2, options.max_record_bytes);
    buffer.reset();  // a larger window is a new buffer: this one goes with `bytes`, now
  }
}

SeriesJobRead read_series_job(const Storage& storage, SeriesValueSink& sink,
                              const SeriesReadOptions& options, const SeriesFormat& format) {
  SeriesJobRead result;
  const auto listing = storage.list("");
  for (const RunFiles& run : format.group_runs(listing)) {
    result.runs.push_back(run.run);
    const std::unique_ptr<RunLoader> loader = format.make_loader(run.run);
    RunLoader& reader = *loader;
    std::vector<SeriesProblem> file_problems;
    for (const StoredObject& file : run.files) {
      ++result.files;
      result.bytes += file.size;
      try {
        read_run_file(storage, file, reader, sink, true, options, file_problems);
      } catch (const StorageError& error) {
        file_problems.push_back({file.path, reader.resume_offset(file.path), error.what()});
      }
    }
    file_problems.insert(file_problems.end(), reader.problems().begin(), reader.problems().end());
    std::stable_sort(file_problems.begin(), file_problems.end(),
                     [](const SeriesProblem& a, const SeriesProblem& b) {
                       return std::tie(a.file, a.offset) < std::tie(b.file, b.offset);
                     });
    result.problems.insert(result.problems.end(), file_problems.begin(), file_problems.end());
  }
  return result;
}

}  // namespace rulestream
