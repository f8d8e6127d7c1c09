#include "stages/load/event_file_loader.hpp"

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <array>
#include <limits>
#include <optional>

#include "core/model/exceptions.hpp"
#include "stages/format/event_codec.hpp"
#include "stages/format/tfrecord_reader.hpp"
#include "stages/load/record_batches.hpp"
#include "stages/reduce/reductions.hpp"

namespace rulestream {

namespace {

// Whether rules reading `value_count` values (`value_bytes` of records) of an event file of
// `all_bytes` should read them from the file's kept mapping rather than from copies in the value
// cache. A copy costs its bytes and an entry in the cache (a hash, an LRU link, an allocation,
// all freed again): for the thousand weights of a small-tensor step, or the 46% of a
// large-tensor step that its weights are, that is far more than mapping the file once
// (docs/decisions.md). A few small values (a loss in a file of gradients) stay copies: cheaper
// than a whole file's pages. One value costs the cache about what a page of mapping costs.
bool keep_values_mapped(std::uint64_t value_bytes, std::uint64_t value_count,
                        std::uint64_t all_bytes) {
  constexpr std::uint64_t kPageBytes = 4096;
  if (value_count == 0) return false;
  return value_bytes * 4 >= all_bytes || value_count * kPageBytes >= all_bytes;
}

// Ranges of a file read for a few of its records: records less than 64 KiB apart are read
// together (one request instead of two, for a little more data), however long that makes it.
constexpr BatchLimits kRangeLimits{.max_bytes = std::numeric_limits<std::uint64_t>::max(),
                                   .max_gap = 64 * 1024};

}  // namespace

EventFileLoader::EventFileLoader(std::shared_ptr<const Storage> storage,
                                 std::shared_ptr<RecordArena> arena, bool check_data_crc,
                                 std::shared_ptr<MemoryBudget> budget, ProblemReport report,
                                 LoadCounters counters)
    : storage_(std::move(storage)),
      arena_(std::move(arena)),
      check_data_crc_(check_data_crc),
      budget_(std::move(budget)),
      report_(std::move(report)),
      counters_(counters) {}

std::shared_ptr<const LandedReductions> EventFileLoader::load(
    const IndexFile& index, std::span<const DecodeSelection::Use> uses,
    DecodedValueKeeper& keeper) const {
  if (!index.event_file_name) return nullptr;
  const std::string& file = *index.event_file_name;
  std::vector<WantedRecord> wanted;
  for (std::size_t i = 0; i < uses.size() && i < index.tensors.size(); ++i) {
    if (uses[i] != DecodeSelection::Use::None) {
      wanted.push_back({&index.tensors[i], uses[i] == DecodeSelection::Use::Values});
    }
  }
  if (wanted.empty()) return nullptr;
  const std::string where = storage_->describe() + "/" + file;
  std::uint64_t value_bytes = 0, value_count = 0, all_bytes = 0;
  for (const WantedRecord& each : wanted) {
    if (!each.keep_value) continue;
    value_bytes += each.location->length;
    ++value_count;
  }
  for (const auto& location : index.tensors) all_bytes += location.length;
  const bool keep_mapped = keep_values_mapped(value_bytes, value_count, all_bytes);
  auto landed = std::make_shared<LandedReductions>(wanted.size(), arena_);
  for (std::size_t i = 0; i < wanted.size(); ++i) {
    landed->records[i] = static_cast<std::uint32_t>(wanted[i].location - index.tensors.data());
  }
  const Job job{file, where, keeper.file_number(file), keeper, *landed};
  bool decoded = false;
  if (!keep_mapped) {
    decoded = decode_in_batches(wanted, job);
  } else if (keep_mapped_for_rules(file)) {
    // The rules read the values from the kept mapping (a lookup and a slice). The records are
    // still decoded from batches read into a buffer: the kernel copies through its own mapping
    // of memory (huge pages) into a buffer that stays in cache, where walking the file's 4 KiB
    // pages took a TLB miss per page (11% of an all-rules replay's samples on the development
    // VM, in frame_record_at). So here the loader keeps no values.
    std::vector<WantedRecord> reduced_only = wanted;
    for (WantedRecord& each : reduced_only) each.keep_value = false;
    decoded = decode_in_batches(reduced_only, job);
  }
  if (!decoded) decode_from_parts(index, wanted, keep_mapped, job);
  // Counted once per file: one shared atomic added to per record, from every thread decoding,
  // was 4% of a two-thread small-tensor replay's samples (its cache line went back and forth).
  *counters_.tensors_decoded += std::count(landed->computed.begin(), landed->computed.end(), 1);
  return landed;
}

bool EventFileLoader::keep_mapped_for_rules(const std::string& file) const {
  std::optional<SharedBytes> mapping;
  try {
    mapping = storage_->map_whole(file, Storage::MapFor::LaterReads);
  } catch (const RulestreamError&) {
    return false;  // decode_from_parts reads the file again and reports what is wrong
  }
  if (!mapping) return false;
  const auto head = mapping->span().first(std::min<std::size_t>(mapping->size(), 64));
  return mapping->in_kept_mapping() && detect_compression(head) == Compression::None;
}

bool EventFileLoader::decode_in_batches(const std::vector<WantedRecord>& wanted,
                                        const Job& job) const {
  std::unique_ptr<RandomAccessFile> reader;
  try {
    reader = storage_->open_random_access(job.file);
    if (!reader) return false;
    // Offsets in a compressed file count inflated bytes: the whole file is read and inflated.
    std::array<std::byte, 64> head{};
    const std::size_t got = reader->read_at(0, head);
    if (detect_compression(std::span(head).first(got)) != Compression::None) return false;
  } catch (const RulestreamError& error) {
    report_(job.where, error.what());
    return true;  // nothing of the file can be read: the rules that ask get the error
  }
  // The index usually lists records in file order; batches need them so.
  std::vector<std::size_t> order(wanted.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return wanted[a].location->start < wanted[b].location->start;
  });
  std::vector<RecordSpan> spans(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    spans[i] = {wanted[order[i]].location->start, wanted[order[i]].location->length};
  }
  const std::vector<RecordBatch> batches = plan_record_batches(spans);
  // Isolated: a thread waiting for the batches takes none of the graph's other tasks. Without
  // it, a loader waiting here can start a rule's evaluation of an earlier step, and the file it
  // is loading (its step, and every step after it) waits until that evaluation ends; a rule
  // that waits for a later step (a test's, or one comparing steps) never sees it.
  tbb::this_task_arena::isolate([&] {
    tbb::parallel_for(std::size_t{0}, batches.size(), [&](std::size_t b) {
      const RecordBatch& batch = batches[b];
      const auto length = static_cast<std::size_t>(batch.end - batch.start);
      const auto reduce_all = [&](const SharedBytes& bytes, bool owned) {
        *counters_.event_bytes += bytes.size();
        for (std::size_t k = batch.first; k < batch.last; ++k) {
          const std::size_t i = order[k];
          reduce_record(bytes, wanted[i].location->start - batch.start, owned, wanted[i], i, job);
        }
      };
      try {
        if (length > BatchBuffer::kKeptBytes) {
          // A record too large to stay in cache anyway (one record is a batch of its own): read as
          // storage reads ranges (a mapping from 4 MiB), rather than copied into a fresh buffer.
          reduce_all(storage_->read_range(job.file, batch.start, length), true);
          return;
        }
        const BatchBuffer buffer(length);
        const std::size_t got = reader->read_at(batch.start, buffer.span());
        // Not owned: values that must outlive the batch are copied out (reduce_record).
        reduce_all(SharedBytes(nullptr, buffer.span().first(got)), false);
      } catch (const RulestreamError& error) {
        report_(job.where, error.what());
      }
    });
  });
  return true;
}

void EventFileLoader::decode_from_parts(const IndexFile& index,
                                        const std::vector<WantedRecord>& wanted, bool keep_mapped,
                                        const Job& job) const {
  std::vector<const TensorLocation*> locations;
  for (const WantedRecord& each : wanted) locations.push_back(each.location);
  std::vector<FilePart> parts;
  try {
    parts = read_parts(index, locations, keep_mapped, job);
  } catch (const RulestreamError& error) {
    report_(job.where, error.what());
    return;
  }
  for (const FilePart& part : parts) *counters_.event_bytes += part.bytes.size();
  tbb::this_task_arena::isolate([&] {  // as in decode_in_batches
    tbb::parallel_for(std::size_t{0}, wanted.size(), [&](std::size_t i) {
      const std::uint64_t start = wanted[i].location->start;
      const FilePart* part = part_holding(parts, start);
      if (part == nullptr) {
        reduce_record({}, 0, true, wanted[i], i, job);  // reports it
        return;
      }
      reduce_record(part->bytes, start - part->start, true, wanted[i], i, job);
    });
  });
}

void EventFileLoader::reduce_record(const SharedBytes& bytes, std::uint64_t offset,
                                    bool bytes_owned, const WantedRecord& wanted, std::size_t i,
                                    const Job& job) const {
  const TensorLocation& location = *wanted.location;
  // Built only when something goes wrong: most records never need it.
  const auto at = [&] {
    return job.where + " at offset " + std::to_string(location.start) + " (tensor '" +
           location.tensor_name + "')";
  };
  const FramingOptions framing{check_data_crc_};
  const Frame frame =
      offset < bytes.size() ? frame_record_at(bytes.span(), offset, framing) : Frame{};
  if (frame.status != FrameStatus::Record) {
    // The rule that asks for it will get the precise error; say it once here too.
    report_(job.where, at() + ": not a whole, valid TFRecord");
    return;
  }
  try {
    // A value the cache keeps must own its bytes; one only reduced may borrow them.
    const bool copy = wanted.keep_value && !bytes_owned;
    const SharedBytes payload =
        copy ? SharedBytes::copy_of(frame.payload)
             : bytes.slice(static_cast<std::size_t>(frame.payload.data() - bytes.data()),
                           frame.payload.size());
    // The file is the context while decoding; the offset and tensor join the message only
    // when something is wrong (a string built per record was 4% of a small-tensor replay's
    // instructions).
    const auto located = locate_tensor(payload, location.tensor_name, job.where);
    if (!located) return;  // the rule that asks for it will get the error
    // Each i writes its own entries: no lock. They reach the store with the landing.
    job.landed.sets[i].assign(compute_reductions(located->value), *arena_);
    job.landed.computed[i] = 1;
    job.landed.tensor_fields[i] = located->tensor_field;
    if (wanted.keep_value) job.keeper.keep(job.file_number, location.start, located->value);
  } catch (const FormatError& error) {
    report_(job.where, at() + ": " + error.detail());
  } catch (const RulestreamError& error) {
    report_(job.where, error.what());
  }
}

std::vector<EventFileLoader::FilePart> EventFileLoader::read_parts(
    const IndexFile& index, const std::vector<const TensorLocation*>& wanted, bool keep_mapped,
    const Job& job) const {
  // Ranges only when the rules want a small share of the file's records (a rule over losses in
  // a file of gradients): then S3 never downloads what no rule reads. Otherwise one read of the
  // whole file (from a local mapping, free).
  std::uint64_t wanted_bytes = 0, all_bytes = 0;
  for (const auto* location : wanted) wanted_bytes += location->length;
  for (const auto& location : index.tensors) all_bytes += location.length;
  if (wanted_bytes * 2 < all_bytes) {
    std::vector<const TensorLocation*> sorted = wanted;
    std::sort(sorted.begin(), sorted.end(),
              [](const auto* a, const auto* b) { return a->start < b->start; });
    std::vector<RecordSpan> spans;
    for (const auto* location : sorted) spans.push_back({location->start, location->length});
    std::vector<FilePart> parts;
    for (const RecordBatch& range : plan_record_batches(spans, kRangeLimits)) {
      parts.push_back(
          {range.start, storage_->read_range(job.file, range.start, range.end - range.start)});
    }
    // A compressed file's offsets count inflated bytes: the ranges then hold no records, and
    // the whole file is read below instead.
    const FramingOptions framing{check_data_crc_};
    const FilePart* first = part_holding(parts, wanted.front()->start);
    const FrameStatus status =
        first == nullptr
            ? FrameStatus::Incomplete
            : frame_record_at(first->bytes.span(), wanted.front()->start - first->start, framing)
                  .status;
    if (status == FrameStatus::Record || status == FrameStatus::BadDataCrc) return parts;
  }
  // A local file whose values rules will read stays mapped for them: their reads are then
  // slices of the mapping, and the value cache holds no copies.
  std::optional<SharedBytes> mapped =
      keep_mapped ? storage_->map_whole(job.file, Storage::MapFor::ReadingNow) : std::nullopt;
  SharedBytes bytes = mapped ? std::move(*mapped) : storage_->read(job.file);
  const auto head = bytes.span().first(std::min<std::size_t>(bytes.size(), 64));
  std::vector<FilePart> whole(1);
  if (const Compression compression = detect_compression(head); compression != Compression::None) {
    // In line for the budget only now the file is read: a slow read holds no one up.
    whole[0].inflation.emplace(*budget_);
    bytes = decompress_file(bytes, compression, job.where, *whole[0].inflation);
  }
  whole[0].bytes = std::move(bytes);
  return whole;
}

const EventFileLoader::FilePart* EventFileLoader::part_holding(const std::vector<FilePart>& parts,
                                                               std::uint64_t offset) {
  for (const FilePart& part : parts) {
    if (offset >= part.start && offset - part.start < part.bytes.size()) return &part;
  }
  return nullptr;
}

}  // namespace rulestream
