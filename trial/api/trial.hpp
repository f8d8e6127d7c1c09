#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/model/collection.hpp"
#include "core/model/exceptions.hpp"
#include "core/model/mode.hpp"
#include "core/model/storage.hpp"
#include "core/model/storage_options.hpp"
#include "core/model/tensor_value.hpp"
#include "trial/store/encoded_value.hpp"
#include "trial/store/trial_options.hpp"

namespace rulestream {

class Tensor;
class TrialStore;
struct StepTensorList;
struct TensorHistory;

// A tensor as Trial::tensor_refs lists it: the store's own copy of its name (it reads as that
// name wherever a name is wanted) and where the store keeps it. Valid while any handle on the
// trial (a Trial or a Tensor) lives.
class TensorRef {
 public:
  const std::string& name() const { return *name_; }
  operator const std::string&() const { return *name_; }  // NOLINT: a name in name loops

 private:
  friend class Trial;
  TensorRef(const TrialStore& store, const std::string& name, const TensorHistory& history)
      : store_(&store), name_(&name), history_(&history) {}

  const TrialStore* store_;
  const std::string* name_;
  const TensorHistory* history_;
};

// Copies of the refs' names, in their order.
std::vector<std::string> names_of(const std::vector<TensorRef>& refs);

// smdebug's StepState: whether the trial has passed a step.
enum class StepState { Unavailable, Available, NotYetAvailable };
std::string_view step_state_name(StepState state);  // "UNAVAILABLE", "AVAILABLE", ...

// Arguments of Trial::tensor_names; every field is optional, as in smdebug:
// trial.tensor_names({.step = 10, .mode = Mode::Train, .regex = {"relu"}}).
struct TensorNameQuery {
  std::optional<std::int64_t> step;  // a step of `mode` (global step for Mode::Global)
  Mode mode = Mode::Global;
  std::vector<std::string> regex;  // Python re regexes (NameRegex), searched, any may match
  std::optional<std::string> collection;
};

// A training job's saved tensors, as smdebug's Trial presents them (seed 001).
//
// A Trial is a cheap, copyable handle onto a shared store that many threads may query while
// new files are being loaded. By default each query on a live trial first picks up new files
// (as smdebug does); `pinned()` returns a handle that sees one fixed state of the trial, so a
// rule invocation gets stable answers however long it runs.
class Trial {
 public:
  // Opens a local folder or an s3:// prefix. Throws StorageError when the path does not exist
  // or holds no smdebug trial, MissingCollectionFiles when an ended job saved nothing.
  static Trial open(const std::string& path, TrialOptions options = {});
  // As above, reaching the path as `storage` says (an S3 endpoint, how many files a local
  // folder keeps mapped).
  static Trial open(const std::string& path, TrialOptions options, const StorageOptions& storage);
  static Trial open(std::shared_ptr<const Storage> storage, TrialOptions options = {});
  // As open, without listing the trial's files yet: `load()`, `refresh()` or (with auto refresh)
  // the first query does. A pipeline opens the trials its rules compare with this way and loads
  // them while its own trial streams. Throws StorageError as open does.
  static Trial open_deferred(std::shared_ptr<const Storage> storage, TrialOptions options = {});
  // The listing open() does: loads what the trial holds, and throws MissingCollectionFiles
  // when an ended job saved nothing.
  void load() const;
  // A handle on a store that a pipeline feeds (see TrialStore::ingest); no listing of its own.
  static Trial from_store(std::shared_ptr<TrialStore> store);

  const std::string& name() const;
  std::string path() const;

  // Loads files that appeared since the last refresh.
  void refresh() const;
  // How long this trial's callers waited for one another's refresh, all together
  // (TrialStore::refresh_waited).
  std::chrono::nanoseconds refresh_waited() const;
  // How many refreshes have listed this trial's storage (TrialStore::refreshes).
  std::uint64_t refreshes() const;
  // A handle that sees the trial as it is now (refreshed first when this handle auto-refreshes)
  // and never refreshes.
  Trial pinned() const;
  // pinned() for a rule's invocation at global `step` of another trial it compares with:
  // refreshed first only while this view has not passed the step (has_passed_step is
  // NotYetAvailable). A trial that has the step from every worker, or will never have it, is
  // pinned as it is: a refresh could add nothing at that step or before it. smdebug likewise
  // refreshes a trial when a step asked for is missing; refreshing at every pin listed a live
  // trial's storage three times a step (on S3, three requests) for nothing once it was ahead.
  Trial pinned_for_step(std::int64_t step) const;
  // A handle pinned at what the store holds now, without refreshing (this handle when pinned):
  // for a caller that has just waited for what it needs (wait_for_steps).
  Trial pinned_as_it_is() const;
  bool is_pinned() const { return generation_.has_value(); }
  // The same view of the same store, through a reference count of its own: copies of it (every
  // Tensor holds one) count apart from other handles' copies. A thread that makes millions of
  // Tensors (a rule) then does not fight other threads over one shared counter's cache line.
  Trial separately_counted() const;

  std::vector<std::string> tensor_names(const TensorNameQuery& query = {}) const;
  // The same tensors without copying their names, as references that tensor(ref) makes a
  // Tensor of without looking the name up again. For rules, which walk every tensor at every
  // step (copying two thousand names a step was 8% of a small-tensor replay).
  std::vector<TensorRef> tensor_refs(const TensorNameQuery& query = {}) const;
  // The values of many tensors at one step of `mode`, each as Tensor::value(step, mode) reads
  // it (the lexicographically first worker's), read together: one lock for every lookup, and
  // the records of each event file cut from one read of it instead of a lookup and a read each
  // (TrialStore::read_records). values[i] is tensors[i]'s, or nullopt when there is none to
  // read: no save at the step that this view sees, or only reductions saved. A record that
  // cannot be read throws FormatError naming its file, offset and tensor, as value() does.
  // Values read from S3 or a compressed file are copies, all held at once: `max_bytes` bounds
  // them. The tensors are then read from the front while their records add up to at most
  // max_bytes (always at least one), and only that prefix's values are returned: the size of
  // the result says how many of `tensors` it covers.
  std::vector<std::optional<TensorValue>> values_at(
      std::span<const TensorRef> tensors, std::int64_t step, Mode mode = Mode::Global,
      std::uint64_t max_bytes = std::numeric_limits<std::uint64_t>::max()) const;
  // values_at's values read but not decoded: each record framed and its tensor field found
  // (EncodedValue), for rules that compare values byte for byte and decode only what differs.
  // Sized and bounded by max_bytes as values_at is; throws as values_at does for a record that
  // cannot be framed, and EncodedValue::decode for a value that cannot be decoded.
  // Meant to be compared and let go: a local file's records may be read into a buffer the trial
  // reuses once nothing holds it (Storage::read_records_range), which a kept EncodedValue keeps
  // from reuse (values decoded from it have bytes of their own).
  std::vector<std::optional<EncodedValue>> encoded_values_at(
      std::span<const TensorRef> tensors, std::int64_t step, Mode mode = Mode::Global,
      std::uint64_t max_bytes = std::numeric_limits<std::uint64_t>::max()) const;
  Tensor tensor(const std::string& name) const;  // throws TensorUnavailable
  Tensor tensor(const TensorRef& ref) const;     // a ref from this trial's store: no lookup
  bool has_tensor(const std::string& name) const;

  // Steps of `mode` (mode steps, or global steps for Mode::Global). Without
  // show_incomplete_steps, only steps every worker has written (or that can no longer
  // complete) are listed.
  std::vector<std::int64_t> steps(Mode mode = Mode::Global,
                                  bool show_incomplete_steps = false) const;
  std::vector<Mode> modes() const;  // never GLOBAL unless data was saved as GLOBAL
  std::optional<Mode> mode(std::int64_t global_step) const;
  std::optional<std::int64_t> mode_step(std::int64_t global_step) const;
  std::optional<std::int64_t> global_step(Mode mode, std::int64_t mode_step) const;
  // When the global step's data arrived: the time a live pipeline saw its first index file, or
  // that file's modification time when the trial was listed (replay, Trial::open). nullopt for
  // a step this view does not have, or whose time is unknown. (Not in smdebug: time-based rules
  // such as StalledTrainingRule need it.)
  std::optional<std::chrono::system_clock::time_point> step_arrival(std::int64_t step) const;

  std::vector<std::string> workers() const;  // sorted
  int num_workers() const;
  std::map<std::string, Collection> collections() const;
  Collection collection(const std::string& name) const;  // throws CollectionUnavailable

  // Blocks until each step is available. Throws StepUnavailable for a step that will never
  // come, NoMoreData when the job ended before it, StepNotYetAvailable if `timeout` passes. A
  // pinned view never changes, so it does not wait: a step it lacks is StepNotYetAvailable at
  // once (the Python module's wait_for_steps waits in slices on that).
  void wait_for_steps(const std::vector<std::int64_t>& steps, Mode mode = Mode::Global,
                      std::optional<std::chrono::milliseconds> timeout = std::nullopt) const;
  StepState has_passed_step(std::int64_t step, Mode mode = Mode::Global) const;

  bool loaded_all_steps() const;            // the job ended and every file has been loaded
  bool has_training_ended() const;          // the end-of-job marker exists
  std::int64_t last_complete_step() const;  // -1 before any
  std::vector<TrialProblem> problems() const;

 private:
  friend class Tensor;
  friend class TensorAccess;
  Trial(std::shared_ptr<TrialStore> store, std::optional<std::uint64_t> generation)
      : store_(std::move(store)), generation_(generation) {}
  // Refreshes when allowed, then returns the generation this query sees.
  std::uint64_t view() const;
  // The store's entry for a tensor this handle sees (refreshing once when allowed); nullptr
  // when it sees none.
  const std::pair<const std::string, TensorHistory>* visible_tensor(const std::string& name) const;
  // Every tensor saved at a global step whose tensors last changed in generation `changed`
  // (StepInfo::tensors_changed), from the store's cache or listed now. Takes the store's read
  // lock itself, a few hundred tensors at a time: call it without holding it.
  std::shared_ptr<const StepTensorList> tensors_at(std::int64_t step, std::uint64_t changed) const;
  // The records values_at and encoded_values_at read (defined in trial_values.cpp).
  struct PlannedReads;
  PlannedReads plan_reads(std::span<const TensorRef> tensors, std::int64_t step, Mode mode,
                          std::uint64_t max_bytes) const;

  std::shared_ptr<TrialStore> store_;
  std::optional<std::uint64_t> generation_;
};

}  // namespace rulestream
