#include "apps/simulator/job_simulator.hpp"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numbers>
#include <span>
#include <stdexcept>
#include <thread>

#include "core/model/collection.hpp"
#include "core/model/exceptions.hpp"
#include "stages/format/collections_file.hpp"
#include "stages/format/trial_writer.hpp"
#include "stages/reduce/reductions.hpp"

namespace rulestream {
namespace {

constexpr std::array<std::pair<JobScenario, std::string_view>, 7> kScenarioNames{{
    {JobScenario::Healthy, "healthy"},
    {JobScenario::VanishingGradients, "vanishing_gradients"},
    {JobScenario::Exploding, "exploding"},
    {JobScenario::DeadRelu, "dead_relu"},
    {JobScenario::LossPlateau, "loss_plateau"},
    {JobScenario::Overfit, "overfit"},
    {JobScenario::FrozenWeights, "frozen_weights"},
}};

// Upper bounds that keep sizes and step arithmetic far from overflow.
constexpr std::int64_t kMaxTensorSize = std::int64_t{1} << 28;  // 1 GiB of float32
constexpr std::int64_t kMaxSteps = std::int64_t{1} << 40;
constexpr int kMaxWorkers = 4096;
constexpr int kMaxLayers = 10000;
constexpr std::int64_t kMaxExtraTensors = 10'000'000;

constexpr double kInitialLoss = 2.3;  // ln(10): cross-entropy of a 10-class guess
constexpr double kEvalLossFactor = 1.1;
constexpr float kWeightSigma = 0.1f;
constexpr float kBiasSigma = 0.05f;
constexpr float kGradientSigma = 0.0125f;  // abs-mean = sigma * sqrt(2 / pi) ~ 1e-2
constexpr float kVanishedGradientSigma = 1.25e-10f;
constexpr double kWeightDriftPerStep = 1e-3;
constexpr double kExplodingFactor = 1e4;
constexpr double kOverfitGrowthPerEvalStep = 0.1;

// --- deterministic randomness -------------------------------------------------------------
// SplitMix64 (Steele, Lea, Flood 2014): tiny state, good enough statistics, and the same
// numbers on every platform, unlike the standard library's distributions.

std::uint64_t mix64(std::uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    state_ += 0x9e3779b97f4a7c15ULL;
    return mix64(state_);
  }

 private:
  std::uint64_t state_;
};

// One independent stream per (seed, purpose, tensor, worker, step): values never depend on the
// order in which workers or tensors are generated.
std::uint64_t stream_key(std::initializer_list<std::uint64_t> parts) {
  std::uint64_t key = 0x2545f4914f6cdd1dULL;
  for (const std::uint64_t part : parts) key = mix64(key ^ mix64(part + 0x9e3779b97f4a7c15ULL));
  return key;
}

std::uint64_t name_hash(std::string_view name) {  // FNV-1a: stable across runs and platforms
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (const char c : name) hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return hash;
}

enum StreamPurpose : std::uint64_t { kParameterStream = 1, kStepStream = 2, kLossStream = 3 };

double unit_interval(std::uint64_t bits) {  // [0, 1) with 53 random bits
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

double symmetric_uniform(std::uint64_t key) {  // [-1, 1)
  return 2.0 * unit_interval(SplitMix64(key).next()) - 1.0;
}

// Box-Muller is too slow to run per element of a 13 GB job, so it fills a table once; tensors
// then draw table entries with 16-bit indices, four per 64-bit random number. The table has no
// exact zero, so ReLU inputs are never 0 and scaled weights always change with their scale.
constexpr std::size_t kNormalTableBits = 16;
constexpr std::size_t kNormalTableSize = std::size_t{1} << kNormalTableBits;

const std::vector<float>& normal_table() {
  static const std::vector<float> table = [] {
    std::vector<float> values;
    values.reserve(kNormalTableSize);
    SplitMix64 random(0x6e6f726d616c7321ULL);
    while (values.size() < kNormalTableSize) {
      const double u1 = 1.0 - unit_interval(random.next());  // (0, 1]: log is finite
      const double u2 = unit_interval(random.next());
      const double radius = std::sqrt(-2.0 * std::log(u1));
      const double angle = 2.0 * std::numbers::pi * u2;
      for (const double z : {radius * std::cos(angle), radius * std::sin(angle)}) {
        const auto value = static_cast<float>(z);
        if (value != 0.0f && values.size() < kNormalTableSize) values.push_back(value);
      }
    }
    return values;
  }();
  return table;
}

void fill_normal(std::span<float> out, std::uint64_t key, float sigma) {
  const float* table = normal_table().data();
  constexpr std::uint64_t kMask = kNormalTableSize - 1;
  SplitMix64 random(key);
  std::size_t i = 0;
  for (; i + 4 <= out.size(); i += 4) {
    const std::uint64_t r = random.next();
    out[i] = table[r & kMask] * sigma;
    out[i + 1] = table[(r >> 16) & kMask] * sigma;
    out[i + 2] = table[(r >> 32) & kMask] * sigma;
    out[i + 3] = table[(r >> 48) & kMask] * sigma;
  }
  std::uint64_t r = random.next();
  for (; i < out.size(); ++i, r >>= 16) out[i] = table[r & kMask] * sigma;
}

// --- the simulated model ------------------------------------------------------------------

enum class TensorKind { Weight, Bias, Gradient, ReluInput, ReluOutput, Loss };

struct TensorSpec {
  std::string name;
  TensorKind kind;
  int relu_layer = 0;  // 1-based, for ReLU tensors
  Shape shape;
  bool as_reductions = false;  // saved as reductions + shape instead of the raw value
  std::uint64_t id = 0;        // name hash: adding tensors does not change the others' values
};

const std::vector<ReductionKey>& weight_reductions() {
  static const std::vector<ReductionKey> keys{{Reduction::Min},        {Reduction::Max},
                                              {Reduction::Mean},       {Reduction::L2},
                                              {Reduction::Mean, true}, {Reduction::L1, true}};
  return keys;
}

const std::vector<ReductionKey>& gradient_reductions() {
  static const std::vector<ReductionKey> keys{
      {Reduction::Mean}, {Reduction::Std},        {Reduction::Variance},  {Reduction::Sum},
      {Reduction::Prod}, {Reduction::Min},        {Reduction::Max},       {Reduction::L1},
      {Reduction::L2},   {Reduction::Mean, true}, {Reduction::Max, true}, {Reduction::Min, true}};
  return keys;
}

// Splits n elements into [rows, cols] as square as n allows.
Shape square_shape(std::int64_t size) {
  auto cols = static_cast<std::int64_t>(std::sqrt(static_cast<double>(size)));
  while (cols > 1 && (cols * cols > size || size % cols != 0)) --cols;
  return {size / cols, cols};
}

// In the order the PyTorch hook writes a step: parameters layer by layer, module outputs in
// forward order, the loss, then gradients as backward produces them (last layer first).
// A ReLU output directly follows its input: the writer derives one from the other.
std::vector<TensorSpec> model_tensors(const JobSimulatorOptions& options) {
  const Shape weight = square_shape(options.tensor_size);
  const Shape bias{weight[0]};
  const Shape activation{weight[1], weight[0]};
  const Shape extra{options.extra_tensor_size};
  const std::string& model = options.model_name;
  const bool reduce = options.reductions_only;

  std::vector<TensorSpec> specs;
  auto add = [&](std::string name, TensorKind kind, Shape shape, bool as_reductions, int relu = 0) {
    const std::uint64_t id = name_hash(name);
    specs.push_back(TensorSpec{std::move(name), kind, relu, std::move(shape), as_reductions, id});
  };
  for (int k = 1; k <= options.layers; ++k) {
    const std::string layer = model + "_fc" + std::to_string(k);
    add(layer + ".weight", TensorKind::Weight, weight, reduce);
    add(layer + ".bias", TensorKind::Bias, bias, false);
  }
  for (std::int64_t i = 0; i < options.extra_tensors; i += 2) {
    add(model + "_layer" + std::to_string(i / 2) + ".weight", TensorKind::Weight, extra, reduce);
  }
  for (int k = 1; k < options.layers; ++k) {
    const std::string relu = "relu" + std::to_string(k);
    add(relu + "_input_0", TensorKind::ReluInput, activation, false, k);
    add(relu + "_output_0", TensorKind::ReluOutput, activation, false, k);
  }
  add("CrossEntropyLoss_output_0", TensorKind::Loss, Shape{}, false);
  for (int k = options.layers; k >= 1; --k) {
    const std::string layer = "gradient/" + model + "_fc" + std::to_string(k);
    add(layer + ".bias", TensorKind::Gradient, bias, reduce);
    add(layer + ".weight", TensorKind::Gradient, weight, reduce);
  }
  for (std::int64_t i = 1; i < options.extra_tensors; i += 2) {
    add("gradient/" + model + "_layer" + std::to_string(i / 2) + ".weight", TensorKind::Gradient,
        extra, reduce);
  }
  return specs;
}

Collection make_collection(const std::string& name, std::vector<std::string> regex,
                           const JobSimulatorOptions& options) {
  Collection collection;
  collection.name = name;
  collection.include_regex = std::move(regex);
  const SaveConfigMode every{options.save_interval, {}, 0, std::nullopt};
  collection.save_config = {{Mode::Train, every},
                            {Mode::Eval, every},
                            {Mode::Predict, std::nullopt},
                            {Mode::Global, std::nullopt}};
  return collection;
}

CollectionsFile make_collections(const JobSimulatorOptions& options,
                                 const std::vector<TensorSpec>& specs) {
  CollectionsFile file;
  file.num_workers = options.workers;
  auto& collections = file.collections;
  collections["all"] = make_collection("all", {}, options);
  collections["default"] = make_collection("default", {}, options);
  collections["weights"] = make_collection("weights", {"^(?!gradient).*weight"}, options);
  collections["biases"] = make_collection("biases", {"^(?!gradient).*bias"}, options);
  collections["gradients"] = make_collection("gradients", {"^gradient"}, options);
  collections["losses"] = make_collection("losses", {"[Ll]oss_(?!input).*output"}, options);
  collections["losses"].save_histogram = false;
  collections["relu_activations"] = make_collection("relu_activations", {"relu"}, options);
  if (options.reductions_only) {
    collections["weights"].reduction_config = ReductionConfig{false, weight_reductions(), true};
    collections["gradients"].reduction_config = ReductionConfig{false, gradient_reductions(), true};
  }
  for (const auto& spec : specs) {
    switch (spec.kind) {
      case TensorKind::Weight:
        collections["weights"].tensor_names.insert(spec.name);
        break;
      case TensorKind::Bias:
        collections["biases"].tensor_names.insert(spec.name);
        break;
      case TensorKind::Gradient:
        collections["gradients"].tensor_names.insert(spec.name);
        break;
      case TensorKind::Loss:
        collections["losses"].tensor_names.insert(spec.name);
        break;
      case TensorKind::ReluInput:
      case TensorKind::ReluOutput:
        collections["relu_activations"].tensor_names.insert(spec.name);
        break;
    }
  }
  return file;
}

// Global steps: blocks of `eval_every` TRAIN steps each followed by `eval_steps` EVAL steps.
class StepPlan {
 public:
  explicit StepPlan(const JobSimulatorOptions& options)
      : train_(options.steps),
        train_per_block_(options.eval_every),
        eval_per_block_(options.eval_every > 0 ? options.eval_steps : 0),
        save_interval_(options.save_interval) {}

  bool has_eval() const { return train_per_block_ > 0 && eval_per_block_ > 0; }
  std::int64_t train_steps() const { return train_; }
  std::int64_t eval_total() const {
    return has_eval() ? (train_ / train_per_block_) * eval_per_block_ : 0;
  }
  std::int64_t total() const { return train_ + eval_total(); }

  SimulatedStep at(std::int64_t global) const {
    SimulatedStep step;
    step.global_step = global;
    if (!has_eval()) {
      step.mode_step = global;
      step.train_progress = global;
    } else {
      const std::int64_t block = train_per_block_ + eval_per_block_;
      const std::int64_t index = global / block;
      const std::int64_t offset = global % block;
      if (offset < train_per_block_) {
        step.mode_step = index * train_per_block_ + offset;
        step.train_progress = step.mode_step;
      } else {
        step.mode = Mode::Eval;
        step.mode_step = index * eval_per_block_ + (offset - train_per_block_);
        step.train_progress = (index + 1) * train_per_block_;
      }
    }
    step.saved = step.mode_step % save_interval_ == 0;
    return step;
  }

  // EVAL steps that run before global step `global`.
  std::int64_t evals_before(std::int64_t global) const {
    if (!has_eval()) return 0;
    const std::int64_t block = train_per_block_ + eval_per_block_;
    return (global / block) * eval_per_block_ +
           std::max<std::int64_t>(0, global % block - train_per_block_);
  }

  // Saved EVAL steps at or after global step `global`.
  std::int64_t saved_evals_from(std::int64_t global) const {
    const std::int64_t first = evals_before(global);
    const std::int64_t end = eval_total();
    if (first >= end) return 0;
    // Multiples of save_interval in [first, end).
    const auto multiples_below = [&](std::int64_t n) {
      return (n + save_interval_ - 1) / save_interval_;
    };
    return multiples_below(end) - multiples_below(first);
  }

 private:
  std::int64_t train_;
  std::int64_t train_per_block_;
  std::int64_t eval_per_block_;
  std::int64_t save_interval_;
};

// Everything the workers share: the options, the tensors, and the fault's figures.
struct JobModel {
  JobModel(const JobSimulatorOptions& job, std::int64_t fault)
      : options(job),
        plan(job),
        specs(model_tensors(job)),
        collections(make_collections(job, specs)),
        fault_step(fault),
        fault_progress(plan.at(fault).train_progress),
        frozen_progress(fault > 0 ? plan.at(fault - 1).train_progress : 0),
        evals_before_fault(plan.evals_before(fault)),
        decay(5.0 / static_cast<double>(job.steps)),
        noise(std::tanh(decay / 2.0) / 4.0) {}

  bool faulty(std::int64_t global_step) const {
    return options.scenario != JobScenario::Healthy && global_step >= fault_step;
  }
  bool is(JobScenario scenario) const { return options.scenario == scenario; }
  bool exploded(std::int64_t global_step) const {  // NaN everywhere from F+2
    return is(JobScenario::Exploding) && global_step >= fault_step + 2;
  }
  double base_loss(std::int64_t progress) const {
    return kInitialLoss * std::exp(-decay * static_cast<double>(progress));
  }

  const JobSimulatorOptions& options;
  StepPlan plan;
  std::vector<TensorSpec> specs;
  CollectionsFile collections;
  std::int64_t fault_step;
  std::int64_t fault_progress;
  std::int64_t frozen_progress;
  std::int64_t evals_before_fault;
  double decay;  // k of the loss curve: exp(-5) over the whole job
  double noise;  // a: small enough that the TRAIN loss strictly decreases at every step
};

// One worker's writer and scratch buffer; run by one thread at a time.
class WorkerSimulation {
 public:
  WorkerSimulation(const JobModel& model, int worker) : model_(model), worker_(worker) {
    TrialWriter::Options options;
    options.root = model.options.output;
    options.worker = "worker_" + std::to_string(worker);
    options.compression = model.options.compression;
    options.atomic_rename = model.options.atomic_rename;
    writer_.emplace(std::move(options));
    std::int64_t largest = 1;
    for (const auto& spec : model.specs) largest = std::max(largest, element_count(spec.shape));
    buffer_.resize(static_cast<std::size_t>(largest));
  }

  void write_step(const SimulatedStep& step) {
    writer_->begin_step(step.global_step, step.mode, step.mode_step);
    for (const auto& spec : model_.specs) {
      if (spec.kind == TensorKind::Gradient && step.mode != Mode::Train) continue;
      if (spec.kind == TensorKind::Loss) {
        const std::vector<float> loss{loss_value(step)};
        writer_->add_tensor(spec.name, TensorValue::from_values(DType::Float32, {}, loss));
        ++records_;
        continue;
      }
      const std::span<float> values(buffer_.data(),
                                    static_cast<std::size_t>(element_count(spec.shape)));
      fill(spec, step, values);
      emit(spec, values);
    }
    writer_->end_step();
    if (!wrote_collections_) {
      writer_->write_collections(model_.collections);
      wrote_collections_ = true;
    }
  }

  void write_end_marker() { writer_->write_end_marker(); }
  std::uint64_t records() const { return records_; }
  std::uint64_t event_bytes() const { return writer_->event_bytes_written(); }

 private:
  float loss_value(const SimulatedStep& step) const {
    const auto g = step.global_step;
    const double u = symmetric_uniform(
        stream_key({model_.options.seed, kLossStream, static_cast<std::uint64_t>(worker_),
                    static_cast<std::uint64_t>(g)}));
    const double mode_factor = step.mode == Mode::Eval ? kEvalLossFactor : 1.0;
    const double healthy =
        mode_factor * model_.base_loss(step.train_progress) * (1.0 + model_.noise * u);
    if (!model_.faulty(g)) return static_cast<float>(healthy);
    switch (model_.options.scenario) {
      case JobScenario::Exploding:
        if (g == model_.fault_step) return static_cast<float>(healthy * kExplodingFactor);
        if (g == model_.fault_step + 1) return std::numeric_limits<float>::infinity();
        return std::numeric_limits<float>::quiet_NaN();
      case JobScenario::LossPlateau:
        return static_cast<float>(mode_factor * model_.base_loss(model_.fault_progress));
      case JobScenario::Overfit:
        if (step.mode != Mode::Eval) return static_cast<float>(healthy);
        return static_cast<float>(
            kEvalLossFactor * model_.base_loss(model_.fault_progress) *
            (1.0 + kOverfitGrowthPerEvalStep *
                       static_cast<double>(step.mode_step - model_.evals_before_fault + 1)));
      default:
        return static_cast<float>(healthy);
    }
  }

  std::uint64_t step_key(const TensorSpec& spec, const SimulatedStep& step) const {
    return stream_key({model_.options.seed, kStepStream, spec.id,
                       static_cast<std::uint64_t>(worker_),
                       static_cast<std::uint64_t>(step.global_step)});
  }

  void fill(const TensorSpec& spec, const SimulatedStep& step, std::span<float> values) const {
    const auto g = step.global_step;
    const bool nan_everywhere = model_.exploded(g);
    if (nan_everywhere) {
      std::fill(values.begin(), values.end(), std::numeric_limits<float>::quiet_NaN());
      return;
    }
    switch (spec.kind) {
      case TensorKind::Weight:
      case TensorKind::Bias: {
        // Replicas hold the same parameters: no worker in the key.
        const std::int64_t progress = model_.is(JobScenario::FrozenWeights) && model_.faulty(g)
                                          ? model_.frozen_progress
                                          : step.train_progress;
        const float sigma = spec.kind == TensorKind::Weight ? kWeightSigma : kBiasSigma;
        const auto scale =
            static_cast<float>(sigma * (1.0 + kWeightDriftPerStep * static_cast<double>(progress)));
        fill_normal(values, stream_key({model_.options.seed, kParameterStream, spec.id}), scale);
        return;
      }
      case TensorKind::Gradient: {
        if (model_.is(JobScenario::FrozenWeights) && model_.faulty(g)) {
          std::fill(values.begin(), values.end(), 0.0f);
          return;
        }
        float sigma = kGradientSigma;
        if (model_.is(JobScenario::VanishingGradients) && model_.faulty(g)) {
          sigma = kVanishedGradientSigma;
        }
        if (model_.is(JobScenario::Exploding) && g == model_.fault_step) {
          sigma = static_cast<float>(kGradientSigma * kExplodingFactor);
        }
        fill_normal(values, step_key(spec, step), sigma);
        if (model_.is(JobScenario::Exploding) && g == model_.fault_step + 1) {
          for (float& value : values) {
            value = std::copysign(std::numeric_limits<float>::infinity(), value);
          }
        }
        return;
      }
      case TensorKind::ReluInput:
        fill_normal(values, step_key(spec, step), 1.0f);
        if (model_.is(JobScenario::DeadRelu) && spec.relu_layer == 1 && model_.faulty(g)) {
          for (float& value : values) value = -std::fabs(value);
        }
        return;
      case TensorKind::ReluOutput:
        // The buffer still holds this layer's input, written just before.
        for (float& value : values) value = value < 0.0f ? 0.0f : value;
        return;
      case TensorKind::Loss:
        break;
    }
    throw std::logic_error("JobSimulator: no generator for tensor '" + spec.name + "'");
  }

  void emit(const TensorSpec& spec, std::span<const float> values) {
    // The writer encodes the record at once, so the value may borrow the reused buffer.
    const TensorValue value(DType::Float32, spec.shape,
                            SharedBytes(nullptr, std::as_bytes(values)));
    if (!spec.as_reductions) {
      writer_->add_tensor(spec.name, value);
      ++records_;
      return;
    }
    const ReductionSet computed = compute_reductions(value);
    const auto count = static_cast<double>(values.size());
    // The PyTorch hook saves torch's unbiased std and variance; compute_reductions gives the
    // population figures numpy computes on read.
    const double unbias =
        values.size() > 1 ? count / (count - 1.0) : std::numeric_limits<double>::quiet_NaN();
    const auto& keys =
        spec.kind == TensorKind::Gradient ? gradient_reductions() : weight_reductions();
    for (const ReductionKey key : keys) {
      double figure = computed.get(key)->as_double();
      if (key.reduction == Reduction::Variance) figure *= unbias;
      if (key.reduction == Reduction::Std) figure *= std::sqrt(unbias);
      const std::vector<float> scalar{static_cast<float>(figure)};
      writer_->add_reduction(spec.name, key, TensorValue::from_values(DType::Float32, {}, scalar));
      ++records_;
    }
    writer_->add_shape(spec.name, spec.shape);
  }

  const JobModel& model_;
  int worker_;
  std::optional<TrialWriter> writer_;
  std::vector<float> buffer_;
  std::uint64_t records_ = 0;
  bool wrote_collections_ = false;
};

[[noreturn]] void invalid(const std::string& message) {
  throw std::invalid_argument("JobSimulator: " + message);
}

void check_range(std::string_view what, std::int64_t value, std::int64_t low, std::int64_t high) {
  if (value < low || value > high) {
    invalid(std::string(what) + " must be in " + std::to_string(low) + ".." + std::to_string(high) +
            " (got " + std::to_string(value) + ")");
  }
}

void prepare_output(const JobSimulatorOptions& options) {
  const auto& output = options.output;
  std::error_code error;
  const auto status = std::filesystem::status(output, error);
  if (std::filesystem::exists(status)) {
    if (!std::filesystem::is_directory(status)) {
      invalid("output '" + output.string() + "' exists and is not a folder");
    }
    if (!options.overwrite && !std::filesystem::is_empty(output, error) && !error) {
      invalid("output folder '" + output.string() +
              "' is not empty; choose an empty folder or allow overwriting");
    }
  }
  std::filesystem::create_directories(output, error);
  if (error) {
    throw StorageError("cannot create output folder " + output.string() + ": " + error.message());
  }
}

}  // namespace

std::string_view job_scenario_name(JobScenario scenario) {
  for (const auto& [value, name] : kScenarioNames) {
    if (value == scenario) return name;
  }
  return "unknown";
}

std::optional<JobScenario> job_scenario_from_name(std::string_view name) {
  for (const auto& [value, known] : kScenarioNames) {
    if (known == name) return value;
  }
  return std::nullopt;
}

JobSimulator::JobSimulator(JobSimulatorOptions options) : options_(std::move(options)) {
  if (options_.output.empty()) invalid("the output folder is empty");
  if (job_scenario_name(options_.scenario) == "unknown") invalid("unknown scenario");
  check_range("workers", options_.workers, 1, kMaxWorkers);
  check_range("steps", options_.steps, 1, kMaxSteps);
  check_range("eval_every", options_.eval_every, 0, kMaxSteps);
  check_range("eval_steps", options_.eval_steps, options_.eval_every > 0 ? 1 : 0, kMaxSteps);
  check_range("save_interval", options_.save_interval, 1, kMaxSteps);
  check_range("layers", options_.layers, 2, kMaxLayers);
  check_range("tensor_size", options_.tensor_size, 1, kMaxTensorSize);
  check_range("extra_tensors", options_.extra_tensors, 0, kMaxExtraTensors);
  check_range("extra_tensor_size", options_.extra_tensor_size, 1, kMaxTensorSize);
  if (options_.step_delay.count() < 0) invalid("step_delay must not be negative");
  if (options_.model_name.empty() || options_.model_name.find('/') != std::string::npos) {
    invalid("model_name must be a non-empty name without '/' (got '" + options_.model_name + "')");
  }

  if (options_.eval_every > 0 &&
      options_.steps / options_.eval_every > (kMaxSteps - options_.steps) / options_.eval_steps) {
    invalid("steps, eval_every and eval_steps make more than " + std::to_string(kMaxSteps) +
            " global steps");
  }
  const StepPlan plan(options_);
  const std::int64_t total = plan.total();
  fault_step_ = options_.fault_step.value_or(total / 2);
  if (fault_step_ < 0 || fault_step_ >= total) {
    invalid("fault step " + std::to_string(fault_step_) + " is outside the job's global steps 0.." +
            std::to_string(total - 1));
  }
  if (options_.scenario == JobScenario::Overfit && plan.saved_evals_from(fault_step_) < 2) {
    invalid("the overfit scenario needs at least two saved EVAL steps from the fault step " +
            std::to_string(fault_step_) + " on (set eval_every, eval_steps and save_interval)");
  }
}

std::int64_t JobSimulator::global_step_count() const {
  return StepPlan(options_).total();
}

SimulatedStep JobSimulator::step(std::int64_t global_step) const {
  const StepPlan plan(options_);
  if (global_step < 0 || global_step >= plan.total()) {
    throw std::out_of_range("JobSimulator::step: global step " + std::to_string(global_step) +
                            " is outside 0.." + std::to_string(plan.total() - 1));
  }
  return plan.at(global_step);
}

std::vector<std::string> JobSimulator::tensor_names() const {
  std::vector<std::string> names;
  for (auto& spec : model_tensors(options_)) names.push_back(std::move(spec.name));
  std::sort(names.begin(), names.end());
  return names;
}

Shape JobSimulator::weight_shape() const {
  return square_shape(options_.tensor_size);
}

SimulationSummary JobSimulator::run() const {
  prepare_output(options_);
  const JobModel model(options_, fault_step_);

  std::vector<WorkerSimulation> workers;
  workers.reserve(static_cast<std::size_t>(options_.workers));
  for (int w = 0; w < options_.workers; ++w) workers.emplace_back(model, w);

  SimulationSummary summary;
  summary.global_steps = model.plan.total();
  summary.train_steps = model.plan.train_steps();
  summary.eval_steps = model.plan.eval_total();
  summary.fault_step = fault_step_;
  summary.tensor_count = model.specs.size();

  for (std::int64_t g = 0; g < summary.global_steps; ++g) {
    const SimulatedStep step = model.plan.at(g);
    if (!step.saved) continue;
    // Every worker writes the step before any moves on: a follower sees steps land in order.
    tbb::parallel_for(std::size_t{0}, workers.size(),
                      [&](std::size_t w) { workers[w].write_step(step); });
    ++summary.saved_steps;
    if (options_.on_step_written) options_.on_step_written(step);
    if (options_.step_delay.count() > 0) std::this_thread::sleep_for(options_.step_delay);
  }
  if (options_.write_end_marker) workers.front().write_end_marker();

  for (const auto& worker : workers) {
    summary.records += worker.records();
    summary.event_bytes += worker.event_bytes();
  }
  return summary;
}

}  // namespace rulestream
