#include "stages/load/index_loader.hpp"

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <memory>

#include "core/model/trial_file.hpp"
#include "stages/format/collections_file.hpp"
#include "stages/format/index_file.hpp"

namespace rulestream {

IndexFileLoad load_index_file(const Storage& storage, const std::string& path,
                              const StepFileName& name,
                              std::optional<std::chrono::system_clock::time_point> arrival) {
  const std::string where = storage.describe() + "/" + path;
  if (!path.ends_with(".json")) {
    return {.problem = TrialProblem{where, where + ": CSV index files are not supported; skipped"}};
  }
  try {
    const SharedBytes bytes = storage.read(path);
    return {.landing = IndexLanding{path,
                                    name.step,
                                    name.worker,
                                    parse_index_file(bytes.as_string_view(), where),
                                    {},
                                    arrival}};
  } catch (const RulestreamError& error) {
    return {.problem = TrialProblem{where, error.what()}};
  }
}

std::pair<std::vector<IndexLanding>, std::vector<TrialProblem>> load_index_files(
    const Storage& storage, std::span<const StoredObject> files,
    const std::function<bool(std::int64_t step)>& wanted_step) {
  std::vector<IndexFileLoad> loads(files.size());
  // Isolated: a thread waiting for these loads takes no unrelated task of its arena (a graph
  // node's, which could wait for what this load is for).
  tbb::this_task_arena::isolate([&] {
    tbb::parallel_for(std::size_t{0}, files.size(), [&](std::size_t i) {
      const StoredObject& object = files[i];
      const auto name = parse_step_file_name(object.path);
      if (!name || !wanted_step(name->step)) return;
      if (!object.path.ends_with(".json") && !object.path.ends_with(".csv")) return;
      loads[i] = load_index_file(storage, object.path, *name,
                                 arrival_from_modified_ns(object.modified_ns));
    });
  });
  std::pair<std::vector<IndexLanding>, std::vector<TrialProblem>> result;
  for (IndexFileLoad& load : loads) {
    if (load.landing) result.first.push_back(std::move(*load.landing));
    if (load.problem) result.second.push_back(std::move(*load.problem));
  }
  return result;
}

CollectionsFileLoad load_collections_file(const Storage& storage, const std::string& path,
                                          const std::string& worker, bool define) {
  CollectionsFileLoad load;
  load.landing.workers.push_back(worker);
  if (!define) return load;
  const std::string where = storage.describe() + "/" + path;
  try {
    const SharedBytes bytes = storage.read(path);
    CollectionsFile parsed = parse_collections_file(bytes.as_string_view(), where);
    load.landing.num_workers = parsed.num_workers;
    load.landing.collections =
        std::make_shared<const std::map<std::string, Collection>>(std::move(parsed.collections));
    for (std::string& problem : parsed.problems) {
      load.problems.push_back(TrialProblem{where, std::move(problem)});
    }
  } catch (const RulestreamError& error) {
    load.problems.push_back(TrialProblem{where, error.what()});
  }
  return load;
}

}  // namespace rulestream
