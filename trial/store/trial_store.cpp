#include "trial/store/trial_store.hpp"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <type_traits>

#include "core/model/exceptions.hpp"
#include "core/model/growing_reservation.hpp"
#include "core/model/trial_layout.hpp"
#include "stages/format/event_codec.hpp"
#include "stages/format/index_file.hpp"
#include "stages/format/tfrecord_reader.hpp"
#include "stages/load/index_loader.hpp"
#include "stages/load/record_batches.hpp"
#include "stages/reduce/reductions.hpp"

namespace rulestream {

namespace {

// How many compressed event files a store keeps inflated (InflatedFiles), within its memory
// budget: a step's records sit in one file per worker.
constexpr std::size_t kInflatedFilesKept = 4;

// How read_records groups records of one file into reads: a read of a kept mapping is a slice
// whatever its size, and elsewhere (S3) one request per few MiB costs far less than one per
// record while holding little memory at once.
constexpr BatchLimits kRecordReadLimits{.max_bytes = std::uint64_t{8} << 20,
                                        .max_gap = std::uint64_t{64} << 10};

std::string_view frame_status_text(FrameStatus status) {
  switch (status) {
    case FrameStatus::Record:
      return "a whole record";
    case FrameStatus::Incomplete:
      return "a record cut short (the index points past the end of the file)";
    case FrameStatus::BadLengthCrc:
      return "a record whose length CRC does not match";
    case FrameStatus::ImpossibleLength:
      return "a record length no record can have (2 GiB or more)";
    case FrameStatus::BadDataCrc:
      return "a record whose data CRC does not match";
  }
  return "an unreadable record";
}

// The key that sorts just before every index file of `step`, for start-after listing.
std::string index_listing_start(std::int64_t step) {
  std::string key = index_file_path(step, "w");
  return key.substr(0, key.rfind('_'));
}

}  // namespace

TrialStore::TrialStore(std::shared_ptr<const Storage> storage, TrialOptions options)
    : storage_(std::move(storage)),
      options_(std::move(options)),
      memory_(options_.memory_budget ? options_.memory_budget
                                     : std::make_shared<MemoryBudget>(options_.value_cache_bytes)),
      cache_(options_.value_cache_bytes, memory_),
      inflated_(memory_, kInflatedFilesKept) {}

std::uint64_t TrialStore::generation() const {
  std::shared_lock lock(mutex_);
  return generation_;
}

TrialStatus TrialStore::status(std::uint64_t generation) const {
  std::shared_lock lock(mutex_);
  return statuses_.at(std::min<std::size_t>(generation, statuses_.size() - 1));
}

std::shared_ptr<const std::map<std::string, Collection>> TrialStore::collections(
    std::uint64_t generation) const {
  std::shared_lock lock(mutex_);
  std::shared_ptr<const std::map<std::string, Collection>> visible;
  for (const auto& [added, collections] : collections_) {
    if (added <= generation) visible = collections;
  }
  return visible;
}

std::vector<TrialProblem> TrialStore::problems(std::uint64_t generation) const {
  std::shared_lock lock(mutex_);
  std::vector<TrialProblem> visible;
  for (const auto& [added, problem] : problems_) {
    if (added <= generation) visible.push_back(problem);
  }
  return visible;
}

void TrialStore::maybe_refresh() {
  if (!options_.auto_refresh) return;
  if (all_steps_loaded_.load(std::memory_order_acquire)) return;
  refresh();
}

bool TrialStore::in_range(std::int64_t step) const {
  if (options_.range_begin && step < *options_.range_begin) return false;
  if (options_.range_end && step >= *options_.range_end) return false;
  return true;
}

void TrialStore::refresh() {
  if (externally_fed_) return;
  refreshes_.run([this] { refresh_now(); });
}

void TrialStore::refresh_now() {
  const TrialStatus before = status(generation());
  if (before.loaded_all_steps) return;

  // The end marker is looked at before listing: files the job wrote before it are then
  // certain to be listed below.
  bool training_ended = false;
  bool final_pass = false;
  for (const auto& object : storage_->list(kEndOfJobMarker)) {
    if (object.path != kEndOfJobMarker) continue;
    training_ended = true;
    const auto now = std::chrono::steady_clock::now();
    if (!end_marker_seen_at_) {
      end_marker_seen_at_ = now;
      const auto age = std::chrono::system_clock::now().time_since_epoch() -
                       std::chrono::nanoseconds(object.modified_ns);
      final_pass = age >= options_.end_of_job_grace;
    } else {
      final_pass = now - *end_marker_seen_at_ >= options_.end_of_job_grace;
    }
  }

  std::vector<TrialProblem> problems;

  // Collections: the first file (in listing order) defines them, as in smdebug; every file
  // names a worker.
  CollectionsLanding pending_collections;
  {
    const bool have_collections = static_cast<bool>(collections(generation()));
    for (const auto& object : storage_->list(kCollectionsDir)) {
      if (seen_collection_files_.contains(object.path)) continue;
      const auto worker = parse_collections_worker(object.path);
      if (!worker) continue;
      seen_collection_files_[object.path] = true;
      const bool define = !have_collections && !pending_collections.collections;
      CollectionsFileLoad load = load_collections_file(*storage_, object.path, *worker, define);
      pending_collections.workers.push_back(*worker);
      if (load.landing.collections) {
        pending_collections.collections = std::move(load.landing.collections);
        pending_collections.num_workers = load.landing.num_workers;
      }
      for (TrialProblem& problem : load.problems) problems.push_back(std::move(problem));
    }
  }

  // Index files of steps that are not complete yet (earlier ones are all loaded).
  std::vector<StoredObject> new_files;
  const std::string start_after =
      before.last_complete_step >= 0 ? index_listing_start(before.last_complete_step + 1) : "";
  for (auto& object : storage_->list(kIndexDir, start_after)) {
    if (seen_index_files_.contains(object.path)) continue;
    new_files.push_back(std::move(object));
  }

  {
    std::set<std::int64_t> new_steps;
    for (const auto& object : new_files) {
      const auto name = parse_step_file_name(object.path);
      if (name && in_range(name->step) && object.path.ends_with(".json")) {
        new_steps.insert(name->step);
      }
    }
    auto lock = read_lock();
    expect_steps(steps_.size() + new_steps.size());
  }

  // A parsed index file holds each entry's name in a string of its own, about 100 bytes an entry.
  // Parsing a whole job before adding any of it took fresh memory for all of it (about 120 MB
  // for the benchmark's 1.2-million-record job), which the kernel zeroes page by page. So the
  // files are parsed in batches, in parallel, and each batch is added (as a generation of its
  // own) before the next is parsed into the memory the last one gave back. Listing order is step
  // order, so each batch appends its steps.
  std::size_t begin = 0;
  do {
    std::size_t end = begin;
    std::uint64_t batch_bytes = 0;
    while (end < new_files.size() && (end == begin || batch_bytes < options_.refresh_batch_bytes)) {
      batch_bytes += new_files[end++].size;
    }
    const std::span<const StoredObject> batch(new_files.data() + begin, end - begin);
    auto [indexes, parse_problems] =
        load_index_files(*storage_, batch, [this](std::int64_t step) { return in_range(step); });
    for (const StoredObject& object : batch) seen_index_files_[object.path] = true;
    for (auto& problem : parse_problems) problems.push_back(std::move(problem));
    // The collections go with the first batch; the end of the job is declared with the last.
    const bool last_batch = end == new_files.size();
    ingest(std::move(indexes), std::move(pending_collections), std::move(problems),
           last_batch && training_ended, last_batch && final_pass);
    pending_collections = {};
    problems.clear();
    begin = end;
  } while (begin < new_files.size());
}

void TrialStore::ingest(std::vector<IndexLanding> indexes, CollectionsLanding collections,
                        std::vector<TrialProblem> problems, bool training_ended, bool final_pass) {
  std::sort(indexes.begin(), indexes.end(), [](const IndexLanding& a, const IndexLanding& b) {
    return std::tie(a.step, a.worker) < std::tie(b.step, b.worker);
  });
  std::unique_lock lock(mutex_);
  const std::uint64_t next = generation_ + 1;
  bool changed = false;

  if (collections.collections) {
    collections_.emplace_back(next, collections.collections);
    declared_num_workers_ = collections.num_workers;
    changed = true;
  }
  for (const auto& worker : collections.workers) {
    if (workers_.emplace(worker, next).second) changed = true;
  }
  for (const auto& index : indexes) {
    add_index(index, next);
    changed = true;
  }
  for (auto& problem : problems) {
    problems_.emplace_back(next, std::move(problem));
    changed = true;
  }

  publish(next, changed, training_ended, final_pass);
  if (collections.collections) {
    std::lock_guard latest(latest_collections_mutex_);
    latest_collections_ = collections.collections;
  }
}

void TrialStore::ingest(const IndexLanding& index) {
  std::unique_lock lock(mutex_);
  const std::uint64_t next = generation_ + 1;
  add_index(index, next);
  publish(next, true, false, false);
}

void TrialStore::publish(std::uint64_t next, bool changed, bool training_ended, bool final_pass) {
  const TrialStatus& previous = statuses_.back();
  TrialStatus status = previous;
  status.training_ended = status.training_ended || training_ended;
  status.num_workers = declared_num_workers_.value_or(static_cast<int>(workers_.size()));
  if (status.num_workers <= 0) status.num_workers = 1;
  for (auto it = steps_.upper_bound(status.last_complete_step); it != steps_.end(); ++it) {
    if (static_cast<int>(it->second.workers.size()) >= status.num_workers) {
      status.last_complete_step = it->first;
    }
  }
  if (final_pass) {
    status.loaded_all_steps = true;
    if (!steps_.empty()) status.last_complete_step = steps_.rbegin()->first;
  }
  if (status.last_complete_step != previous.last_complete_step ||
      status.loaded_all_steps != previous.loaded_all_steps ||
      status.training_ended != previous.training_ended ||
      status.num_workers != previous.num_workers) {
    changed = true;
  }
  if (!changed) return;
  generation_ = next;
  statuses_.push_back(status);
  if (status.loaded_all_steps) all_steps_loaded_.store(true, std::memory_order_release);
}

std::string TrialStore::describe_record(const RecordRef& ref, const std::string& tensor) const {
  return storage_->describe() + "/" + file_of(ref) + " (tensor '" +
         (ref.record_name != nullptr ? *ref.record_name : tensor) + "')";
}

TensorValue TrialStore::read_record(const RecordRef& ref, const std::string& tensor) const {
  if (auto cached = cache_.value(ref.key())) return std::move(*cached);
  return read_uncached(ref, tensor);
}

TensorValue TrialStore::read_uncached(const RecordRef& ref, const std::string& tensor) const {
  return decode_record(ref, tensor, record_bytes(ref, tensor));
}

SharedBytes TrialStore::record_bytes(const RecordRef& ref, const std::string& tensor) const {
  // The file's handle, opened as its index landed: no lookup of the file by its path.
  if (const StoredFile* const file = cache_.file_handle(ref.file_id)) {
    return file->read_range(ref.start, ref.length);
  }
  const std::string& file = file_of(ref);
  if (file.empty()) throw FormatError(record_place(ref, tensor), "the index names no event file");
  return storage_->read_range(file, ref.start, ref.length);
}

std::string TrialStore::record_place(const RecordRef& ref, const std::string& tensor) const {
  return storage_->describe() + "/" + file_of(ref) + " at offset " + std::to_string(ref.start) +
         " (tensor '" + tensor + "')";
}

TensorValue TrialStore::decode_record(const RecordRef& ref, const std::string& tensor,
                                      SharedBytes bytes) const {
  const EncodedValue located = locate_record(ref, tensor, std::move(bytes));
  return decode_located(ref, tensor, located.payload_, located.encoded_);
}

EncodedValue TrialStore::locate_record(const RecordRef& ref, const std::string& tensor,
                                       SharedBytes bytes) const {
  const std::string& file = file_of(ref);
  // A record whose value the pipeline reduced as it landed had its data CRC checked then, in the
  // local file these bytes come straight from (a kept mapping, or a copy read just now):
  // checking again would only be a second pass over every value a rule reads (framing, both
  // passes together, was 8% of a large all-rules replay's samples).
  const bool checked_on_landing = ref.reductions != nullptr && bytes.from_local_file();
  const FramingOptions framing{options_.check_data_crc && !checked_on_landing};
  Frame frame = frame_record_at(bytes.span(), 0, framing);
  if (frame.status != FrameStatus::Record && frame.status != FrameStatus::BadDataCrc) {
    // TensorFlow can write whole-file compressed TFRecords; offsets then refer to the
    // inflated stream. The file inflated for an earlier record of it serves this one too.
    const auto needed = static_cast<std::size_t>(ref.start + ref.length);
    if (std::optional<SharedBytes> inflated = inflated_.find(ref.file_id, needed)) {
      bytes = std::move(*inflated);
      frame = frame_record_at(bytes.span(), ref.start, framing);
    } else {
      SharedBytes whole = storage_->read(file);
      const auto head = whole.span().first(std::min<std::size_t>(whole.size(), 64));
      if (const Compression compression = detect_compression(head);
          compression != Compression::None) {
        GrowingReservation inflation(*memory_);
        bytes = decompress_file(whole, compression, storage_->describe() + "/" + file, inflation);
        inflated_.keep(ref.file_id, bytes, inflation.settle());
        frame = frame_record_at(bytes.span(), ref.start, framing);
      }
    }
  }
  if (frame.status != FrameStatus::Record) {
    throw FormatError(record_place(ref, tensor), "expected a TFRecord of " +
                                                     std::to_string(ref.length) + " bytes, found " +
                                                     std::string(frame_status_text(frame.status)));
  }
  const auto payload_offset = static_cast<std::size_t>(frame.payload.data() - bytes.data());
  SharedBytes payload = bytes.slice(payload_offset, frame.payload.size());
  const std::string& tag = ref.record_name != nullptr ? *ref.record_name : tensor;
  // A record decoded as it landed has its tensor field noted, in the same bytes (0: not noted;
  // no tensor field sits at payload offset 0, the Event's own first field).
  const bool known = checked_on_landing && ref.tensor_field != 0;
  std::optional<std::span<const std::byte>> encoded;
  try {
    if (known) {
      encoded = tensor_proto_at(payload, ref.tensor_field, tag, file);
    } else if (const std::optional<TensorField> found = find_tensor_field(payload, tag, file)) {
      encoded = found->tensor_proto;
    }
  } catch (const FormatError& error) {
    throw FormatError(record_place(ref, tensor), error.detail());
  }
  if (!encoded) {
    throw FormatError(record_place(ref, tensor), "the record holds no tensor named '" + tag + "'");
  }
  return EncodedValue(*this, ref, tensor, std::move(payload), *encoded, known);
}

TensorValue TrialStore::decode_located(const RecordRef& ref, const std::string& tensor,
                                       const SharedBytes& payload,
                                       std::span<const std::byte> encoded) const {
  const std::string& tag = ref.record_name != nullptr ? *ref.record_name : tensor;
  std::optional<TensorValue> value;
  try {
    value = decode_tensor_proto(payload, encoded, tag, file_of(ref));
  } catch (const FormatError& error) {
    throw FormatError(record_place(ref, tensor), error.detail());
  }
  cache_.put_value(ref.key(), *value);
  // A value cut from a recycled buffer gets bytes of its own: rules keep values (the last step's
  // weights), and one held value would keep the whole buffer from reuse. So does a small part of
  // a buffer storage does not keep (an inflated event file): the budget counts that buffer only
  // while a cache holds it, and a rule holding one value would hold all of it.
  const bool small_part = !payload.from_local_file() && !value->is_string() &&
                          value->bytes().size() * 2 < value->bytes().owner_size();
  if ((payload.recycled() || small_part) && !value->is_string()) {
    return TensorValue(value->dtype(), value->shape(), SharedBytes::copy_of(value->bytes().span()));
  }
  return std::move(*value);
}

std::optional<DType> TrialStore::dtype_located(const RecordRef& ref, const std::string& tensor,
                                               const SharedBytes& payload,
                                               std::span<const std::byte> encoded) const {
  const std::string& tag = ref.record_name != nullptr ? *ref.record_name : tensor;
  try {
    return tensor_proto_dtype(payload, encoded, tag, file_of(ref));
  } catch (const FormatError& error) {
    throw FormatError(record_place(ref, tensor), error.detail());
  }
}

template <typename Each>
void TrialStore::read_record_bytes(std::span<const RecordRead> reads,
                                   std::vector<std::size_t> unread, Each&& each) const {
  std::sort(unread.begin(), unread.end(), [&](std::size_t a, std::size_t b) {
    const RecordRef& x = reads[a].ref;
    const RecordRef& y = reads[b].ref;
    return x.file_id != y.file_id ? x.file_id < y.file_id : x.start < y.start;
  });
  std::vector<RecordSpan> spans;
  for (std::size_t begin = 0; begin < unread.size();) {
    const FileId file_id = reads[unread[begin]].ref.file_id;
    std::size_t end = begin + 1;
    while (end < unread.size() && reads[unread[end]].ref.file_id == file_id) ++end;
    const std::span<const std::size_t> of_file(unread.data() + begin, end - begin);
    begin = end;

    const std::string& file = file_of(reads[of_file.front()].ref);
    if (of_file.size() == 1 || file.empty()) {
      for (const std::size_t i : of_file) each(i, record_bytes(reads[i].ref, *reads[i].tensor));
      continue;
    }
    spans.clear();
    for (const std::size_t i : of_file) spans.push_back({reads[i].ref.start, reads[i].ref.length});
    for (const RecordBatch& batch : plan_record_batches(spans, kRecordReadLimits)) {
      // Each value keeps a slice of these bytes (three, on its way): counted apart from the
      // file's mapping, which other threads slice for the same step at the same time.
      const SharedBytes bytes =
          storage_->read_records_range(file, batch.start, batch.end - batch.start).counted_apart();
      for (std::size_t k = batch.first; k < batch.last; ++k) {
        const std::size_t i = of_file[k];
        const RecordRef& ref = reads[i].ref;
        const std::uint64_t at = ref.start - batch.start;
        // Each record is framed in exactly the bytes its index gives it, as read_record frames
        // it: a wrong length in the index is an error here too, not a neighbour's bytes. A file
        // cut short is read as read_uncached reads it, to say so as it does.
        each(i, at + ref.length <= bytes.size() ? bytes.slice(static_cast<std::size_t>(at),
                                                              static_cast<std::size_t>(ref.length))
                                                : record_bytes(ref, *reads[i].tensor));
      }
    }
  }
}

template <typename Cached>
std::vector<std::size_t> TrialStore::uncached_reads(std::span<const RecordRead> reads,
                                                    Cached&& cached) const {
  std::vector<std::size_t> unread;  // positions in reads
  unread.reserve(reads.size());
  for (std::size_t i = 0; i < reads.size(); ++i) {
    if (auto value = cache_.value(reads[i].ref.key())) {
      cached(i, std::move(*value));
    } else {
      unread.push_back(i);
    }
  }
  return unread;
}

std::vector<TensorValue> TrialStore::read_records(std::span<const RecordRead> reads) const {
  std::vector<TensorValue> values(reads.size());
  std::vector<std::size_t> unread = uncached_reads(
      reads, [&](std::size_t i, TensorValue value) { values[i] = std::move(value); });
  read_record_bytes(reads, std::move(unread), [&](std::size_t i, SharedBytes bytes) {
    values[i] = decode_record(reads[i].ref, *reads[i].tensor, std::move(bytes));
  });
  return values;
}

std::vector<std::optional<EncodedValue>> TrialStore::read_encoded(
    std::span<const RecordRead> reads) const {
  std::vector<std::optional<EncodedValue>> values(reads.size());
  std::vector<std::size_t> unread = uncached_reads(reads, [&](std::size_t i, TensorValue value) {
    values[i].emplace(EncodedValue(*this, reads[i].ref, *reads[i].tensor, std::move(value)));
  });
  read_record_bytes(reads, std::move(unread), [&](std::size_t i, SharedBytes bytes) {
    values[i].emplace(locate_record(reads[i].ref, *reads[i].tensor, std::move(bytes)));
  });
  return values;
}

ReductionSet TrialStore::reductions_of(const RecordRef& ref, const std::string& tensor) const {
  if (ref.reductions) return ref.reductions->unpack();
  if (auto cached = cache_.reductions(ref.key())) return std::move(*cached);
  ReductionSet computed = compute_reductions(read_record(ref, tensor));
  cache_.put_reductions(ref.key(), computed);
  return computed;
}

void TrialStore::release_through(std::int64_t step) {
  std::unique_lock lock(mutex_);
  TrialStatus status = statuses_.back();
  if (status.last_complete_step >= step) return;
  status.last_complete_step = step;
  ++generation_;
  statuses_.push_back(status);
}

}  // namespace rulestream
