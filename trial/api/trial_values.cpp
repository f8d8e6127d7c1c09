// Trial::values_at and Trial::encoded_values_at: many tensors' values at one step, read together.

#include <algorithm>
#include <utility>

#include "trial/api/tensor_lookup.hpp"
#include "trial/api/trial.hpp"
#include "trial/store/trial_store.hpp"

namespace rulestream {

struct Trial::PlannedReads {
  std::size_t covered = 0;  // how many of the tensors the reads cover (a prefix)
  std::vector<TrialStore::RecordRead> reads;
  std::vector<std::size_t> positions;  // in tensors, of each read
};

Trial::PlannedReads Trial::plan_reads(std::span<const TensorRef> tensors, std::int64_t step,
                                      Mode mode, std::uint64_t max_bytes) const {
  PlannedReads planned;
  planned.covered = tensors.size();
  std::uint64_t bytes = 0;
  planned.reads.reserve(tensors.size());
  planned.positions.reserve(tensors.size());
  // As each Tensor::value would: an unpinned handle first sees what a refresh finds.
  if (!is_pinned()) store_->maybe_refresh();
  auto lock = store_->read_lock();
  const std::uint64_t g = generation_.value_or(store_->generation_under_lock());
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const TensorRef& ref = tensors[i];
    // A ref from another trial's store names a tensor here only by its name.
    const TensorHistory* history =
        ref.store_ == store_.get() ? ref.history_ : store_->find_tensor(ref.name());
    if (history == nullptr) continue;
    const TensorStep* found = find_step(*store_, *history, step, mode, g, nullptr);
    if (found == nullptr) continue;
    const WorkerSave* save = first_worker_save(*found, g);
    const RecordRef* raw = save != nullptr ? save->raw() : nullptr;
    if (raw == nullptr) continue;
    if (!planned.reads.empty() && raw->length > max_bytes - std::min(bytes, max_bytes)) {
      planned.covered = i;
      break;
    }
    bytes += raw->length;
    planned.reads.push_back({*raw, &ref.name()});
    planned.positions.push_back(i);
  }
  return planned;
}

std::vector<std::optional<TensorValue>> Trial::values_at(std::span<const TensorRef> tensors,
                                                         std::int64_t step, Mode mode,
                                                         std::uint64_t max_bytes) const {
  const PlannedReads planned = plan_reads(tensors, step, mode, max_bytes);
  std::vector<std::optional<TensorValue>> values(planned.covered);
  std::vector<TensorValue> read = store_->read_records(planned.reads);
  for (std::size_t k = 0; k < read.size(); ++k) values[planned.positions[k]] = std::move(read[k]);
  return values;
}

std::vector<std::optional<EncodedValue>> Trial::encoded_values_at(
    std::span<const TensorRef> tensors, std::int64_t step, Mode mode,
    std::uint64_t max_bytes) const {
  const PlannedReads planned = plan_reads(tensors, step, mode, max_bytes);
  std::vector<std::optional<EncodedValue>> read = store_->read_encoded(planned.reads);
  // Every tensor covered has a record (the common case): the reads are in the tensors' order.
  if (read.size() == planned.covered) return read;
  std::vector<std::optional<EncodedValue>> values(planned.covered);
  for (std::size_t k = 0; k < read.size(); ++k) values[planned.positions[k]] = std::move(read[k]);
  return values;
}

}  // namespace rulestream
