#include "stages/tensorboard/logdir_reader.hpp"

#include <algorithm>
#include <tuple>

#include "pipeline/model/exceptions.hpp"
#include "stages/tensorboard/logdir_runs.hpp"

namespace rulestream {

void read_run_file(const Storage& storage, const StoredObject& file, RunReader& reader,
                   TensorBoardValueSink& sink, bool final_size, const LogdirReadOptions& options,
                   std::vector<TensorBoardProblem>& problems) {
  std::uint64_t window = std::max<std::uint64_t>(options.window_bytes, 64);
  for (;;) {
    const std::uint64_t offset = reader.resume_offset(file.path);
    if (offset >= file.size || reader.file_dead(file.path)) return;
    const SharedBytes bytes = storage.read_range(file.path, offset, window);
    reader.read(file.path, bytes, offset, sink);
    if (reader.file_dead(file.path)) return;
    if (reader.resume_offset(file.path) > offset) continue;
    if (bytes.size() < window) {
      // No whole record in what is left: the file ends inside one (or is still being written).
      if (!final_size) return;
      problems.push_back({file.path, offset,
                          file.path + ": record at offset " + std::to_string(offset) +
                              ": the file ends inside it (" + std::to_string(bytes.size()) +
                              " bytes left); they are not read"});
      return;
    }
    window *= 2;  // a record larger than the window: read it whole
  }
}

LogdirRead read_logdir(const Storage& storage, TensorBoardValueSink& sink,
                       const LogdirReadOptions& options) {
  LogdirRead result;
  const auto listing = storage.list("");
  for (const RunFiles& run : group_runs(listing)) {
    result.runs.push_back(run.run);
    RunReader reader(run.run);
    std::vector<TensorBoardProblem> file_problems;
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
                     [](const TensorBoardProblem& a, const TensorBoardProblem& b) {
                       return std::tie(a.file, a.offset) < std::tie(b.file, b.offset);
                     });
    result.problems.insert(result.problems.end(), file_problems.begin(), file_problems.end());
  }
  return result;
}

}  // namespace rulestream
