#include "trial/store/encoded_value.hpp"

#include <utility>

#include "trial/store/trial_store.hpp"

namespace rulestream {

EncodedValue::EncodedValue(const TrialStore& store, const RecordRef& record,
                           const std::string& tensor, SharedBytes payload,
                           std::span<const std::byte> encoded, bool checked)
    : store_(&store),
      record_(record),
      tensor_(&tensor),
      payload_(std::move(payload)),
      encoded_(encoded),
      checked_(checked) {}

EncodedValue::EncodedValue(const TrialStore& store, const RecordRef& record,
                           const std::string& tensor, TensorValue decoded)
    : store_(&store),
      record_(record),
      tensor_(&tensor),
      decoded_(std::make_shared<const TensorValue>(std::move(decoded))) {}

std::optional<DType> EncodedValue::dtype() const {
  if (decoded_) return decoded_->dtype();
  return store_->dtype_located(record_, *tensor_, payload_, encoded_);
}

TensorValue EncodedValue::decode() const {
  if (decoded_) return *decoded_;
  return store_->decode_located(record_, *tensor_, payload_, encoded_);
}

}  // namespace rulestream
