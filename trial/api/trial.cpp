#include "trial/api/trial.hpp"

#include <algorithm>
#include <filesystem>
#include <set>
#include <thread>

#include "core/model/exceptions.hpp"
#include "core/model/name_regex.hpp"
#include "core/model/trial_layout.hpp"
#include "sources/open/storage_factory.hpp"
#include "trial/api/tensor.hpp"
#include "trial/store/name_filter_cache.hpp"
#include "trial/store/trial_store.hpp"

namespace rulestream {

std::string_view step_state_name(StepState state) {
  switch (state) {
    case StepState::Unavailable:
      return "UNAVAILABLE";
    case StepState::Available:
      return "AVAILABLE";
    case StepState::NotYetAvailable:
      return "NOT_YET_AVAILABLE";
  }
  return "UNAVAILABLE";
}

namespace {

// A filtered query at a step looks at the tensors its filter picks, one by one, when they are
// at most one in this many of the trial's; otherwise at the step's shared list of tensors.
constexpr std::size_t kFewOfMany = 16;
// Tensors a step's listing looks at per hold of the store's lock (Trial::tensors_at): tens of
// microseconds, against a few hundred for the small benchmark job's two thousand in one hold.
constexpr std::size_t kTensorsPerHold = 256;

std::string default_trial_name(const std::string& path) {
  std::string trimmed = path;
  while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.pop_back();
  const auto slash = trimmed.rfind('/');
  return slash == std::string::npos ? trimmed : trimmed.substr(slash + 1);
}

}  // namespace

Trial Trial::open(const std::string& path, TrialOptions options) {
  return open(path, std::move(options), StorageOptions{});
}

Trial Trial::open(const std::string& path, TrialOptions options, const StorageOptions& storage) {
  if (options.name.empty()) options.name = default_trial_name(path);
  return open(open_storage(path, storage), std::move(options));
}

Trial Trial::open(std::shared_ptr<const Storage> storage, TrialOptions options) {
  Trial trial = open_deferred(std::move(storage), std::move(options));
  trial.load();
  return trial;
}

Trial Trial::open_deferred(std::shared_ptr<const Storage> storage, TrialOptions options) {
  if (!storage->root_exists()) {
    throw StorageError(storage->describe() + ": no such trial folder");
  }
  if (options.name.empty()) options.name = default_trial_name(storage->describe());
  const bool looks_like_trial =
      storage->exists(kEndOfJobMarker) || !storage->list(kIndexDir).empty() ||
      !storage->list(kCollectionsDir).empty() || !storage->list(kEventsDir).empty();
  if (!looks_like_trial) {
    throw StorageError(storage->describe() +
                       ": not an smdebug trial (no collections/, index/ or events/ files)");
  }
  return Trial(std::make_shared<TrialStore>(std::move(storage), std::move(options)), std::nullopt);
}

void Trial::load() const {
  store_->refresh();
  const auto generation = store_->generation();
  if (!store_->status(generation).training_ended || store_->collections(generation)) return;
  const bool no_steps = [&] {
    auto lock = store_->read_lock();
    return store_->steps().empty();
  }();
  if (no_steps) throw MissingCollectionFiles(store_->storage().describe());
}

Trial Trial::from_store(std::shared_ptr<TrialStore> store) {
  return Trial(std::move(store), std::nullopt);
}

const std::string& Trial::name() const {
  return store_->options().name;
}
std::string Trial::path() const {
  return store_->storage().describe();
}

void Trial::refresh() const {
  store_->refresh();
}

std::chrono::nanoseconds Trial::refresh_waited() const {
  return store_->refresh_waited();
}

std::uint64_t Trial::refreshes() const {
  return store_->refreshes();
}

Trial Trial::pinned() const {
  // view(): an auto-refreshing handle first picks up what landed (and waits for a load another
  // thread has under way), as its queries would.
  return Trial(store_, view());
}

Trial Trial::pinned_for_step(std::int64_t step) const {
  // A handle that would not refresh (pinned, archives, a pipeline's own trial) has nothing to
  // decide: this runs for every rule at every step.
  if (generation_ || !store_->refreshes_on_query()) return pinned();
  Trial view = pinned_as_it_is();
  if (view.has_passed_step(step) != StepState::NotYetAvailable) return view;
  return pinned();
}

Trial Trial::pinned_as_it_is() const {
  return generation_ ? *this : Trial(store_, store_->generation());
}

Trial Trial::separately_counted() const {
  // An aliasing pointer: it points at the store and counts in its own block, which owns one
  // reference to the store.
  auto owner = std::make_shared<std::shared_ptr<TrialStore>>(store_);
  return Trial(std::shared_ptr<TrialStore>(owner, store_.get()), generation_);
}

std::uint64_t Trial::view() const {
  if (generation_) return *generation_;
  store_->maybe_refresh();
  return store_->generation();
}

std::vector<std::string> names_of(const std::vector<TensorRef>& refs) {
  std::vector<std::string> names;
  names.reserve(refs.size());
  for (const TensorRef& ref : refs) names.push_back(ref.name());
  return names;
}

std::vector<std::string> Trial::tensor_names(const TensorNameQuery& query) const {
  return names_of(tensor_refs(query));
}

std::vector<TensorRef> Trial::tensor_refs(const TensorNameQuery& query) const {
  const std::uint64_t g = view();
  // The collection definition as of this view; it stays alive in the store (append-only), so
  // its address identifies it in the filter cache.
  const Collection* collection = nullptr;
  std::shared_ptr<const std::map<std::string, Collection>> collections;
  if (query.collection) {
    collections = store_->collections(g);
    if (!collections) throw CollectionUnavailable(*query.collection);
    const auto it = collections->find(*query.collection);
    if (it == collections->end()) throw CollectionUnavailable(*query.collection);
    collection = &it->second;
  }

  // Every list comes sorted and unique: the store's tensors are ordered by name. Its refs hold
  // the store's own keys (its map nodes never move or go).
  const bool filtered = !query.regex.empty() || collection != nullptr;
  // Seen in this view: first seen by generation g, and in the query's mode when it names one.
  const auto visible = [&](const TensorHistory& history) {
    return history.generation <= g &&
           (query.mode == Mode::Global || history.first_seen_in(query.mode) <= g);
  };
  if (!query.step && !filtered) {
    std::vector<TensorRef> all;
    auto lock = store_->read_lock();
    for (const auto& [name, history] : store_->tensors()) {
      if (visible(history)) all.push_back(TensorRef(*store_, name, history));
    }
    return all;
  }
  // A query at a step that exists: the step's list is taken below, outside any hold of the
  // store's lock (tensors_at takes it a part at a time); for a filtered query only once the
  // filter's verdicts say that it does not pick so few tensors that looking at those alone
  // costs less.
  std::optional<std::pair<std::int64_t, std::uint64_t>> step_to_list;  // global step, changed
  std::shared_ptr<const StepTensorList> step_tensors;
  if (query.step) {
    auto lock = store_->read_lock();
    std::optional<std::int64_t> global = *query.step;
    if (query.mode != Mode::Global) {
      global.reset();
      if (auto mode_it = store_->mode_steps().find(query.mode);
          mode_it != store_->mode_steps().end()) {
        if (const auto* entry = mode_it->second.find(*query.step);
            entry != nullptr && entry->second <= g) {
          global = entry->first;
        }
      }
    }
    if (global) {
      if (auto it = store_->steps().find(*global);
          it != store_->steps().end() && it->second.generation <= g) {
        step_to_list.emplace(*global, it->second.tensors_changed);
      }
    }
  }
  // A tensor saved at the step by some worker visible in this view; `positions` in the step's
  // layout, or all of them.
  const auto at_step = [&](const std::vector<std::uint32_t>* positions) {
    const StepLayout& layout = *step_tensors->layout;
    std::vector<TensorRef> result;
    const auto take = [&](std::size_t i) {
      if (step_tensors->visible_from[i] <= g) {
        result.push_back(TensorRef(*store_, *layout.names[i], *layout.histories[i]));
      }
    };
    if (positions == nullptr) {
      result.reserve(layout.size());
      for (std::size_t i = 0; i < layout.size(); ++i) take(i);
    } else {
      for (const std::uint32_t i : *positions) take(i);
    }
    return result;
  };
  if (!filtered) {
    if (!step_to_list) return {};  // no such step in this view
    step_tensors = tensors_at(step_to_list->first, step_to_list->second);
    return at_step(nullptr);
  }

  // A name passes when it matches a regex or belongs to the collection (by name or by the
  // collection's include_regex), as smdebug's union of the two filters. Verdicts are cached
  // per filter; the regexes are compiled (and checked) when a filter is first seen or a name
  // is new to it.
  std::string key;
  for (const auto& pattern : query.regex) (key += pattern) += '\x1f';
  if (collection != nullptr) {
    key += '\x1e';
    key += std::to_string(reinterpret_cast<std::uintptr_t>(collection));
  }
  bool is_new = false;
  NameFilterCache::Verdicts& verdicts = store_->name_filters().verdicts(key, &is_new);
  std::optional<std::vector<NameRegex>> regexes, collection_regexes;
  const auto compile = [&] {
    if (regexes) return;
    regexes = compile_name_regexes(query.regex);
    collection_regexes = collection != nullptr ? compile_name_regexes(collection->include_regex)
                                               : std::vector<NameRegex>{};
  };
  if (is_new) compile();  // a bad regex is an error even when no name is there to match
  const auto decide = [&](const std::string& name) {
    compile();
    return any_found_in(*regexes, name) ||
           (collection != nullptr &&
            (collection->tensor_names.contains(name) || any_found_in(*collection_regexes, name)));
  };
  auto lock = verdicts.lock();
  // Lock order: a filter's verdicts, then the store. Nothing takes them the other way round
  // (the blocks above let the store go before the verdicts are taken).
  auto store_lock = store_->read_lock();
  const auto& all = store_->tensors();
  NameFilterCache::PassingTensors& passing = verdicts.passing_tensors();
  if (passing.of_tensors != all.size()) {  // tensors only ever come: a count says it all
    passing.tensors.clear();
    for (const auto& [name, history] : all) {
      if (verdicts.passes(name, decide)) passing.tensors.emplace_back(&name, &history);
    }
    passing.of_tensors = all.size();
  }
  if (!query.step) {
    // The filter's own list of the tensors that pass, rather than a walk through every tensor
    // of the store and a verdict looked up for each: VanishingGradient asks for its gradients
    // at every step, and the walk held the store's lock throughout (issue 23).
    std::vector<TensorRef> result;
    for (const auto& [name, history] : passing.tensors) {
      if (visible(*history)) result.push_back(TensorRef(*store_, *name, *history));
    }
    return result;
  }
  if (!step_to_list) return {};  // no such step in this view
  const auto [global, changed] = *step_to_list;
  // A filter that picks a few of many tensors (a rule over the losses) looks at those alone:
  // the step's whole list is a walk through every tensor, which the first rule to ask about a
  // step pays for, and a serial rule must not pay it for the parallel ones (issue 23).
  if (passing.tensors.size() * kFewOfMany <= all.size()) {
    std::vector<TensorRef> result;
    for (const auto& [name, history] : passing.tensors) {
      if (history->generation > g) continue;
      const TensorStep* saved = history->steps.find(global);
      if (saved == nullptr || saved->saves.empty()) continue;
      // Seen from the generation of the step's first save (tensors_at's visible_from).
      std::uint64_t first_save = saved->saves.front().generation;
      for (const WorkerSave& save : saved->saves) {
        first_save = std::min(first_save, save.generation);
      }
      if (first_save <= g) result.push_back(TensorRef(*store_, *name, *history));
    }
    return result;
  }
  store_lock.unlock();  // tensors_at takes the store's lock itself, a few tensors at a time
  step_tensors = tensors_at(global, changed);
  return at_step(verdicts.passing(step_tensors->layout, decide).get());
}

std::shared_ptr<const StepTensorList> Trial::tensors_at(std::int64_t step,
                                                        std::uint64_t changed) const {
  StepTensorsCache& cache = store_->step_tensors();
  if (auto cached = cache.find(step, changed)) return cached;
  // Every tensor saved at the step, whatever the view: each view filters by visible_from.
  StepLayout layout;
  std::vector<std::uint64_t> visible_from;
  // The walk looks up the step in every tensor's history (a few hundred microseconds for two
  // thousand tensors), so it lets the store's lock go every kTensorsPerHold tensors: held
  // throughout, it kept the store's writer waiting, and with it every reader that came after
  // the writer (issue 23: the longest holds of an all-rules replay, 300-600 us for two thousand
  // tensors). Between holds the store may grow; what the walk then finds is still right:
  // - the tensors' map only gains nodes and none moves, so the node the walk stands on is still
  //   there, and stepping on from it (under the lock) reaches every node that was after it;
  // - every tensor saved at the step by generation `built_at` (the store's latest when the walk
  //   began) had its node before then, so it is found; the list is held as built at that
  //   generation, and a view that needs a later one lists the step again (StepTensorsCache);
  // - a tensor first saved at the step during the walk may be found or not; when found, its
  //   visible_from (its first save's generation) keeps earlier views from seeing it.
  auto lock = store_->read_lock();
  const std::uint64_t built_at = store_->generation_under_lock();
  const auto& tensors = store_->tensors();
  std::size_t held_for = 0;
  for (auto it = tensors.begin(); it != tensors.end(); ++it) {
    if (++held_for == kTensorsPerHold) {
      lock.unlock();
      lock.lock();
      held_for = 0;
    }
    const auto& [name, history] = *it;
    const TensorStep* saved = history.steps.find(step);
    if (saved == nullptr || saved->saves.empty()) continue;
    std::uint64_t first_save = saved->saves.front().generation;
    for (const WorkerSave& save : saved->saves) first_save = std::min(first_save, save.generation);
    layout.names.push_back(&name);
    layout.histories.push_back(&history);
    visible_from.push_back(std::max(history.generation, first_save));
  }
  lock.unlock();
  return cache.put(step, built_at, std::move(layout), std::move(visible_from));
}

Tensor Trial::tensor(const TensorRef& ref) const {
  // A ref from another trial's store names a tensor here only by its name.
  if (ref.store_ != store_.get()) return tensor(ref.name());
  // Fixed once the tensor is published (before any ref to it exists). An unpinned handle sees
  // every published tensor, so only a pinned one needs the check (and no refresh is due).
  if (generation_ && ref.history_->generation > *generation_) {
    throw TensorUnavailable(ref.name());
  }
  return Tensor(*this, *ref.name_, *ref.history_);
}

Tensor Trial::tensor(const std::string& name) const {
  const auto* entry = visible_tensor(name);
  if (entry == nullptr) throw TensorUnavailable(name);
  return Tensor(*this, entry->first, entry->second);
}

bool Trial::has_tensor(const std::string& name) const {
  return visible_tensor(name) != nullptr;
}

const std::pair<const std::string, TensorHistory>* Trial::visible_tensor(
    const std::string& name) const {
  auto seen = [&](std::uint64_t g) -> const std::pair<const std::string, TensorHistory>* {
    auto lock = store_->read_lock();
    const auto* entry = store_->find_tensor_entry(name);
    return entry != nullptr && entry->second.generation <= g ? entry : nullptr;
  };
  if (generation_) return seen(*generation_);
  if (const auto* entry = seen(store_->generation())) return entry;
  store_->maybe_refresh();
  return seen(store_->generation());
}

std::vector<std::int64_t> Trial::steps(Mode mode, bool show_incomplete_steps) const {
  const std::uint64_t g = view();
  const TrialStatus status = store_->status(g);
  auto lock = store_->read_lock();
  std::vector<std::int64_t> result;
  auto complete = [&](std::int64_t global) {
    if (show_incomplete_steps || status.loaded_all_steps || status.last_complete_step >= global) {
      return true;
    }
    const auto& workers = store_->steps().at(global).workers;
    const auto visible = std::count_if(workers.begin(), workers.end(),
                                       [&](const auto& entry) { return entry.second <= g; });
    return visible >= status.num_workers;
  };
  if (mode == Mode::Global) {
    for (const auto& [step, info] : store_->steps()) {
      if (info.generation <= g && complete(step)) result.push_back(step);
    }
  } else if (auto it = store_->mode_steps().find(mode); it != store_->mode_steps().end()) {
    for (const auto& [mode_step, entry] : it->second) {
      if (entry.second <= g && complete(entry.first)) result.push_back(mode_step);
    }
  }
  return result;
}

std::vector<Mode> Trial::modes() const {
  const std::uint64_t g = view();
  auto lock = store_->read_lock();
  std::vector<Mode> result;
  for (const auto& [mode, steps] : store_->mode_steps()) {
    if (std::any_of(steps.begin(), steps.end(),
                    [&](const auto& entry) { return entry.second.second <= g; })) {
      result.push_back(mode);
    }
  }
  return result;
}

std::optional<Mode> Trial::mode(std::int64_t global_step) const {
  const std::uint64_t g = view();
  auto lock = store_->read_lock();
  const auto it = store_->steps().find(global_step);
  if (it == store_->steps().end() || it->second.generation > g) return std::nullopt;
  return it->second.mode;
}

std::optional<std::int64_t> Trial::mode_step(std::int64_t global_step) const {
  const std::uint64_t g = view();
  auto lock = store_->read_lock();
  const auto it = store_->steps().find(global_step);
  if (it == store_->steps().end() || it->second.generation > g) return std::nullopt;
  return it->second.mode_step;
}

std::optional<std::chrono::system_clock::time_point> Trial::step_arrival(std::int64_t step) const {
  const std::uint64_t g = view();
  auto lock = store_->read_lock();
  const auto it = store_->steps().find(step);
  if (it == store_->steps().end() || it->second.generation > g) return std::nullopt;
  return it->second.arrival;
}

std::optional<std::int64_t> Trial::global_step(Mode mode, std::int64_t mode_step) const {
  // smdebug treats a GLOBAL "mode step" as the global step itself, seen or not.
  if (mode == Mode::Global) return mode_step;
  const std::uint64_t g = view();
  auto lock = store_->read_lock();
  const auto mode_it = store_->mode_steps().find(mode);
  if (mode_it == store_->mode_steps().end()) return std::nullopt;
  const auto* entry = mode_it->second.find(mode_step);
  if (entry == nullptr || entry->second > g) return std::nullopt;
  return entry->first;
}

std::vector<std::string> Trial::workers() const {
  const std::uint64_t g = view();
  auto lock = store_->read_lock();
  std::vector<std::string> result;
  for (const auto& [worker, added] : store_->workers()) {
    if (added <= g) result.push_back(worker);
  }
  return result;
}

int Trial::num_workers() const {
  return store_->status(view()).num_workers;
}

std::map<std::string, Collection> Trial::collections() const {
  const auto collections = store_->collections(view());
  return collections ? *collections : std::map<std::string, Collection>{};
}

Collection Trial::collection(const std::string& name) const {
  const auto collections = store_->collections(view());
  if (!collections) throw CollectionUnavailable(name);
  const auto it = collections->find(name);
  if (it == collections->end()) throw CollectionUnavailable(name);
  return it->second;
}

StepState Trial::has_passed_step(std::int64_t step, Mode mode) const {
  const std::uint64_t g = view();
  const TrialStatus status = store_->status(g);
  auto lock = store_->read_lock();

  // The first step of `mode` at or after `step` that this view sees (steps a later generation
  // added are not its), as (step of the mode, global step). Found from `step` on, not by listing
  // every step: every rule asks at every step, and a list per question made a long job's replay
  // quadratic in its steps.
  std::optional<std::pair<std::int64_t, std::int64_t>> next;
  if (mode == Mode::Global) {
    const auto& steps = store_->steps();
    for (auto it = steps.lower_bound(step); it != steps.end() && !next; ++it) {
      if (it->second.generation <= g) next.emplace(it->first, it->first);
    }
  } else if (auto it = store_->mode_steps().find(mode); it != store_->mode_steps().end()) {
    for (auto at = it->second.lower_bound(step); at != it->second.end() && !next; ++at) {
      const auto& [global, generation] = at->second;
      if (generation <= g) next.emplace(at->first, global);
    }
  }

  if (!next) {
    return status.loaded_all_steps ? StepState::Unavailable : StepState::NotYetAvailable;
  }
  const std::int64_t global = next->second;
  if (next->first > step) {
    // A gap: it will never be filled once every worker has written a later step.
    return status.last_complete_step >= global || status.loaded_all_steps
               ? StepState::Unavailable
               : StepState::NotYetAvailable;
  }
  const auto& workers = store_->steps().at(global).workers;
  const auto visible = std::count_if(workers.begin(), workers.end(),
                                     [&](const auto& entry) { return entry.second <= g; });
  if (visible >= status.num_workers || status.loaded_all_steps ||
      global <= status.last_complete_step) {
    return StepState::Available;
  }
  return StepState::NotYetAvailable;
}

void Trial::wait_for_steps(const std::vector<std::int64_t>& steps, Mode mode,
                           std::optional<std::chrono::milliseconds> timeout) const {
  const auto started = std::chrono::steady_clock::now();
  auto timed_out = [&] {
    return timeout.has_value() && std::chrono::steady_clock::now() - started >= *timeout;
  };
  for (const std::int64_t step : steps) {
    while (true) {
      // As smdebug: the trial is refreshed only while the step is missing. A rule invoked at
      // every step of a live trial used to list its storage at every call, ahead or not.
      StepState state = pinned_as_it_is().has_passed_step(step, mode);
      if (state == StepState::NotYetAvailable && !generation_) {
        store_->refresh();
        state = pinned_as_it_is().has_passed_step(step, mode);
      }
      if (state == StepState::Available) break;
      if (state == StepState::Unavailable) {
        if (!loaded_all_steps()) throw StepUnavailable(step, mode);
        const auto known = this->steps(mode, true);
        if (!known.empty() && step < known.back()) throw StepUnavailable(step, mode);
        throw NoMoreData("waiting for " + std::string(mode_name(mode)) + " step " +
                         std::to_string(step) + "; the last step saved is " +
                         (known.empty() ? std::string("none") : std::to_string(known.back())));
      }
      if (generation_ || timed_out()) {
        throw StepNotYetAvailable(step, mode);
      }
      std::this_thread::sleep_for(store_->options().poll_interval);
    }
  }
}

bool Trial::loaded_all_steps() const {
  return store_->status(view()).loaded_all_steps;
}
bool Trial::has_training_ended() const {
  return store_->status(view()).training_ended;
}
std::int64_t Trial::last_complete_step() const {
  return store_->status(view()).last_complete_step;
}
std::vector<TrialProblem> Trial::problems() const {
  return store_->problems(view());
}

}  // namespace rulestream
