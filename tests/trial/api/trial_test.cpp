// Trial/Tensor semantics on trials written by the project's own writer: round trips, live
// trials with lagging workers, exceptions, pinned views, range_steps and bad input.
#include "trial/api/trial.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include "apps/simulator/job_simulator.hpp"
#include "core/model/exceptions.hpp"
#include "core/model/trial_layout.hpp"
#include "stages/format/trial_writer.hpp"
#include "tests/support/test_support.hpp"
#include "trial/api/tensor.hpp"

namespace rulestream {
namespace {

using rulestream::testing::TempDir;

TensorValue floats(std::vector<float> values, Shape shape) {
  return TensorValue::from_values(DType::Float32, std::move(shape), values);
}

CollectionsFile default_collections(int num_workers) {
  CollectionsFile file;
  Collection gradients;
  gradients.name = "gradients";
  gradients.include_regex = {"^gradient"};
  file.collections["gradients"] = gradients;
  Collection losses;
  losses.name = "losses";
  losses.include_regex = {"[Ll]oss_(?!input).*output"};
  file.collections["losses"] = losses;
  file.num_workers = num_workers;
  return file;
}

// Writes one step for one worker: a loss and a gradient whose values encode step and worker.
void write_step(TrialWriter& writer, std::int64_t step, Mode mode, std::int64_t mode_step,
                float worker_offset) {
  writer.begin_step(step, mode, mode_step);
  writer.add_tensor("Loss_output_0", floats({static_cast<float>(step) + worker_offset}, {}));
  if (mode == Mode::Train) {
    writer.add_tensor(
        "gradient/fc.weight",
        floats({1.0f + worker_offset, -2.0f, 3.0f, static_cast<float>(step)}, {2, 2}));
  }
  writer.end_step();
}

TrialOptions quick_options() {
  TrialOptions options;
  options.end_of_job_grace = std::chrono::milliseconds(0);
  options.poll_interval = std::chrono::milliseconds(10);
  return options;
}

// A two-worker job where worker_0 has written steps 0-2 and worker_1 nothing yet.
struct TwoWorkerJob {
  TwoWorkerJob() {
    fast.write_collections(default_collections(2));
    slow.write_collections(default_collections(2));
    for (std::int64_t step = 0; step < 3; ++step) write_step(fast, step, Mode::Train, step, 0.0f);
  }
  TempDir dir;
  TrialWriter fast{{.root = dir.path(), .worker = "worker_0"}};
  TrialWriter slow{{.root = dir.path(), .worker = "worker_1"}};
};

TEST(Trial, RoundTripsWhatTheWriterSaved) {
  TempDir dir;
  TrialWriter writer({.root = dir.path()});
  write_step(writer, 0, Mode::Train, 0, 0.0f);
  write_step(writer, 1, Mode::Train, 1, 0.0f);
  write_step(writer, 2, Mode::Eval, 0, 0.0f);
  writer.write_collections(default_collections(1));
  writer.write_end_marker();

  const Trial trial = Trial::open(dir.path().string(), quick_options());
  EXPECT_EQ(trial.tensor_names(),
            (std::vector<std::string>{"Loss_output_0", "gradient/fc.weight"}));
  EXPECT_EQ(trial.steps(), (std::vector<std::int64_t>{0, 1, 2}));
  EXPECT_EQ(trial.steps(Mode::Train), (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(trial.steps(Mode::Eval), (std::vector<std::int64_t>{0}));
  EXPECT_EQ(trial.modes(), (std::vector<Mode>{Mode::Train, Mode::Eval}));
  EXPECT_EQ(trial.mode(2), Mode::Eval);
  EXPECT_EQ(trial.mode_step(2), 0);
  EXPECT_EQ(trial.global_step(Mode::Eval, 0), 2);
  EXPECT_EQ(trial.global_step(Mode::Eval, 7), std::nullopt);
  EXPECT_EQ(trial.workers(), (std::vector<std::string>{"worker_0"}));
  EXPECT_TRUE(trial.loaded_all_steps());
  EXPECT_EQ(trial.tensor_names({.collection = "gradients"}),
            (std::vector<std::string>{"gradient/fc.weight"}));
  EXPECT_EQ(trial.tensor_names({.step = 0, .mode = Mode::Eval}),
            (std::vector<std::string>{"Loss_output_0"}));

  const Tensor gradient = trial.tensor("gradient/fc.weight");
  const TensorValue value = gradient.value(1);
  EXPECT_EQ(value.dtype(), DType::Float32);
  EXPECT_EQ(value.shape(), (Shape{2, 2}));
  EXPECT_EQ(value.as_double(3), 1.0);
  EXPECT_DOUBLE_EQ(gradient.reduction_value(1, Reduction::Mean).as_double(), 3.0 / 4.0);
  EXPECT_DOUBLE_EQ(
      gradient.reduction_value(1, Reduction::Mean, Mode::Global, std::nullopt, true).as_double(),
      7.0 / 4.0);
  EXPECT_EQ(gradient.value(1, Mode::Train).as_double(3), 1.0);
  EXPECT_EQ(gradient.prev_steps(1, 5), (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(gradient.shape(0), (Shape{2, 2}));
}

// tensor_refs lists what tensor_names lists, without copies; tensor(ref) is tensor(name). The
// refs, like a Tensor's name, are the store's and stay valid while any handle on it lives.
TEST(Trial, TensorRefsMatchTensorNamesAndOutliveTheirHandle) {
  TempDir dir;
  TrialWriter writer({.root = dir.path()});
  write_step(writer, 0, Mode::Train, 0, 0.0f);
  write_step(writer, 1, Mode::Eval, 0, 0.0f);
  writer.write_collections(default_collections(1));
  writer.write_end_marker();

  const std::vector<TensorNameQuery> queries = {{},
                                                {.step = 0},
                                                {.step = 1},
                                                {.step = 0, .mode = Mode::Eval},
                                                {.collection = "gradients"},
                                                {.step = 1, .collection = "losses"},
                                                {.regex = {"fc", "^Loss"}},
                                                {.step = 7}};
  const auto names_of = [](const std::vector<TensorRef>& refs) {
    std::vector<std::string> names;
    for (const TensorRef& ref : refs) names.push_back(ref.name());
    return names;
  };
  std::vector<TensorRef> kept;
  std::optional<Tensor> gradient;
  {
    const Trial trial = Trial::open(dir.path().string(), quick_options());
    for (const TensorNameQuery& query : queries) {
      EXPECT_EQ(names_of(trial.tensor_refs(query)), trial.tensor_names(query));
    }
    kept = trial.tensor_refs();
    ASSERT_EQ(kept.size(), 2u);
    gradient = trial.tensor(kept[1]);
    EXPECT_EQ(gradient->name(), "gradient/fc.weight");
    EXPECT_EQ(&gradient->name(), &kept[1].name()) << "the store's own name, not a copy";

    // A ref from another trial's store is taken by its name.
    const Trial other = Trial::open(dir.path().string(), quick_options());
    const std::vector<TensorRef> theirs = other.tensor_refs();
    EXPECT_NE(&theirs[1].name(), &kept[1].name()) << "each trial has its own store";
    const Tensor by_their_ref = trial.tensor(theirs[1]);
    EXPECT_EQ(&by_their_ref.name(), &kept[1].name());
    EXPECT_EQ(by_their_ref.value(0).as_double(0), 1.0);
  }
  // The Tensor's copy of the trial keeps the store (and so its name and history) alive.
  EXPECT_EQ(gradient->name(), "gradient/fc.weight");
  EXPECT_EQ(gradient->steps(), (std::vector<std::int64_t>{0}));
  EXPECT_EQ(gradient->value(0).as_double(3), 0.0);
  // So do refs taken from any handle on the same store.
  EXPECT_EQ(names_of(kept), (std::vector<std::string>{"Loss_output_0", "gradient/fc.weight"}));

  // A pinned view from before a tensor existed does not make one of a later ref.
  TempDir live;
  TrialWriter live_writer({.root = live.path()});
  live_writer.begin_step(0, Mode::Train, 0);
  live_writer.add_tensor("Loss_output_0", floats({1.0f}, {}));
  live_writer.end_step();
  live_writer.write_collections(default_collections(1));
  const Trial live_trial = Trial::open(live.path().string(), quick_options());
  const Trial before = live_trial.pinned();
  write_step(live_writer, 1, Mode::Train, 1, 0.0f);
  live_trial.refresh();
  const std::vector<TensorRef> later = live_trial.tensor_refs();
  ASSERT_EQ(names_of(later), (std::vector<std::string>{"Loss_output_0", "gradient/fc.weight"}));
  EXPECT_THROW(before.tensor(later[1]), TensorUnavailable);
  EXPECT_EQ(before.tensor(later[0]).name(), "Loss_output_0");
}

// The store tries the tensor a worker saved at the same position of its previous index file
// before looking a name up; tensors that come and go or change places must land where they
// belong all the same.
TEST(Trial, TensorsThatMoveBetweenAWorkersStepsLandUnderTheirOwnNames) {
  TempDir dir;
  TrialWriter writer({.root = dir.path()});
  const std::vector<std::vector<std::string>> layouts = {
      {"a_output_0", "b_output_0", "c_output_0"},
      {"c_output_0", "a_output_0"},
      {"a_output_0", "b_output_0", "c_output_0", "d_output_0"},
      {"d_output_0"}};
  for (std::size_t step = 0; step < layouts.size(); ++step) {
    writer.begin_step(static_cast<std::int64_t>(step), Mode::Train,
                      static_cast<std::int64_t>(step));
    for (const std::string& name : layouts[step]) {
      // The value says which tensor and which step it is.
      const float code = static_cast<float>(10 * (name[0] - 'a') + static_cast<int>(step));
      writer.add_tensor(name, floats({code}, {}));
    }
    writer.end_step();
  }
  writer.write_collections(default_collections(1));
  writer.write_end_marker();

  const Trial trial = Trial::open(dir.path().string(), quick_options());
  for (std::size_t step = 0; step < layouts.size(); ++step) {
    std::vector<std::string> expected = layouts[step];
    std::sort(expected.begin(), expected.end());
    const auto global = static_cast<std::int64_t>(step);
    EXPECT_EQ(trial.tensor_names({.step = global}), expected) << "step " << step;
    for (const std::string& name : expected) {
      EXPECT_EQ(trial.tensor(name).value(global).as_double(0),
                10 * (name[0] - 'a') + static_cast<int>(step))
          << name << " at step " << step;
    }
  }
  EXPECT_EQ(trial.tensor("b_output_0").steps(), (std::vector<std::int64_t>{0, 2}));
  EXPECT_EQ(trial.tensor("d_output_0").steps(), (std::vector<std::int64_t>{2, 3}));
}

// Rules share each step's list of tensors (the store's StepTensorsCache); a tensor that first
// lands at a step after its list was made must still show in later views, and not in earlier
// ones, filtered or not.
TEST(Trial, AStepsTensorsIncludeOnesThatLandThereLater) {
  TwoWorkerJob job;
  const Trial trial = Trial::open(job.dir.path().string(), quick_options());
  const std::vector<std::string> both = {"Loss_output_0", "gradient/fc.weight"};
  const TensorNameQuery outputs{.step = 1, .regex = {"output"}};
  const TensorNameQuery gradients{.step = 1, .collection = "gradients"};
  EXPECT_EQ(trial.tensor_names({.step = 1}), both);
  EXPECT_EQ(trial.tensor_names(outputs), (std::vector<std::string>{"Loss_output_0"}));
  EXPECT_EQ(trial.tensor_names(gradients), (std::vector<std::string>{"gradient/fc.weight"}));
  EXPECT_EQ(trial.tensor_names({.step = 1, .mode = Mode::Train}), both);
  const Trial before = trial.pinned();

  // worker_1 saves a tensor worker_0 never did, at a step whose list is made already.
  job.slow.begin_step(1, Mode::Train, 1);
  job.slow.add_tensor("Loss_output_0", floats({1.0f}, {}));
  job.slow.add_tensor("relu_output_0", floats({0.5f, 0.0f}, {2}));
  job.slow.end_step();
  trial.refresh();

  const std::vector<std::string> three = {"Loss_output_0", "gradient/fc.weight", "relu_output_0"};
  EXPECT_EQ(trial.tensor_names({.step = 1}), three);
  EXPECT_EQ(trial.tensor_names({.step = 1, .mode = Mode::Train}), three);
  EXPECT_EQ(trial.tensor_names(outputs),
            (std::vector<std::string>{"Loss_output_0", "relu_output_0"}));
  EXPECT_EQ(trial.tensor_names(gradients), (std::vector<std::string>{"gradient/fc.weight"}));
  EXPECT_EQ(trial.tensor_refs({.step = 1, .regex = {"relu"}}).at(0).name(), "relu_output_0");
  EXPECT_EQ(trial.tensor("relu_output_0").value(1, Mode::Global, std::string("worker_1")).size(),
            2u);
  // The view from before worker_1's step sees what it saw, from the same shared list.
  EXPECT_EQ(before.tensor_names({.step = 1}), both);
  EXPECT_EQ(before.tensor_names(outputs), (std::vector<std::string>{"Loss_output_0"}));
  // Other steps are untouched.
  EXPECT_EQ(trial.tensor_names({.step = 0}), both);
  EXPECT_EQ(trial.tensor_names({.step = 2, .regex = {"output"}}),
            (std::vector<std::string>{"Loss_output_0"}));
  EXPECT_TRUE(trial.tensor_names({.step = 9}).empty());
}

// A separately counted handle is the same trial (same store, same view), and it keeps the store
// alive on its own.
TEST(Trial, ASeparatelyCountedHandleIsTheSameTrial) {
  TwoWorkerJob job;
  std::optional<Trial> counted;
  std::optional<Trial> pinned_counted;
  std::vector<TensorRef> refs;
  {
    const Trial trial = Trial::open(job.dir.path().string(), quick_options());
    counted = trial.separately_counted();
    pinned_counted = trial.pinned().separately_counted();
    EXPECT_FALSE(counted->is_pinned());
    EXPECT_TRUE(pinned_counted->is_pinned());
    refs = trial.tensor_refs({.step = 1});
    EXPECT_EQ(&counted->tensor(refs[0]).name(), &refs[0].name()) << "the same store";
  }
  job.slow.begin_step(1, Mode::Train, 1);
  job.slow.add_tensor("relu_output_0", floats({1.0f}, {1}));
  job.slow.end_step();
  counted->refresh();
  EXPECT_EQ(counted->tensor_names({.step = 1}),
            (std::vector<std::string>{"Loss_output_0", "gradient/fc.weight", "relu_output_0"}));
  EXPECT_EQ(pinned_counted->tensor_names({.step = 1}),
            (std::vector<std::string>{"Loss_output_0", "gradient/fc.weight"}));
  EXPECT_EQ(counted->tensor(refs[1]).value(1).as_double(3), 1.0);
}

// Pinning an auto-refreshing handle first picks up what landed since its last query (a rule's
// other trials are pinned per invocation, and must follow a live job as their queries would);
// pinning a handle that does not auto-refresh, or is pinned already, reads nothing new.
TEST(Trial, PinningAnAutoRefreshingHandleSeesWhatLandedSinceItsLastQuery) {
  TwoWorkerJob job;
  TrialOptions manual = quick_options();
  manual.auto_refresh = false;
  const Trial live = Trial::open(job.dir.path().string(), quick_options());
  const Trial by_hand = Trial::open(job.dir.path().string(), manual);
  const Trial pinned_before = live.pinned();
  const auto savers = [](const Trial& trial) { return trial.tensor("Loss_output_0").workers(0); };
  const std::vector<std::string> first{"worker_0"};
  const std::vector<std::string> both{"worker_0", "worker_1"};
  EXPECT_EQ(savers(live.pinned()), first);

  write_step(job.slow, 0, Mode::Train, 0, 10.0f);
  EXPECT_EQ(savers(live.pinned()), both);
  EXPECT_EQ(live.pinned().tensor("Loss_output_0").value(0, Mode::Global, "worker_1").as_double(0),
            10.0);
  EXPECT_EQ(savers(by_hand.pinned()), first);
  EXPECT_EQ(savers(pinned_before.pinned()), first);
}

TEST(Trial, ExceptionsSaySmdebugsReasons) {
  TempDir dir;
  TrialWriter writer({.root = dir.path()});
  write_step(writer, 0, Mode::Train, 0, 0.0f);
  write_step(writer, 2, Mode::Eval, 0, 0.0f);
  writer.write_collections(default_collections(1));
  writer.write_end_marker();
  const Trial trial = Trial::open(dir.path().string(), quick_options());

  EXPECT_THROW(trial.tensor("nope"), TensorUnavailable);
  const Tensor gradient = trial.tensor("gradient/fc.weight");
  EXPECT_THROW(gradient.value(2), TensorUnavailableForStep);  // EVAL step: no gradients
  EXPECT_THROW(gradient.value(1), StepUnavailable);           // a gap
  EXPECT_THROW(gradient.value(3), StepUnavailable);           // past the end of an ended job
  EXPECT_THROW(gradient.value(0, Mode::Global, std::string("worker_9")), InvalidWorker);
  EXPECT_THROW(trial.collection("weights"), CollectionUnavailable);
  EXPECT_EQ(trial.has_passed_step(0), StepState::Available);
  EXPECT_EQ(trial.has_passed_step(1), StepState::Unavailable);
  EXPECT_EQ(trial.has_passed_step(5), StepState::Unavailable);
  EXPECT_THROW(trial.wait_for_steps({1}), StepUnavailable);
  EXPECT_THROW(trial.wait_for_steps({9}), NoMoreData);
  try {
    gradient.value(2);
  } catch (const TensorUnavailableForStep& error) {
    EXPECT_NE(std::string(error.what()).find("gradient/fc.weight"), std::string::npos);
    EXPECT_NE(std::string(error.what()).find("step 2"), std::string::npos);
  }
}

TEST(Trial, LiveTrialWithALaggingWorker) {
  TwoWorkerJob job;
  TrialWriter& fast = job.fast;
  TrialWriter& slow = job.slow;
  const auto& dir = job.dir;
  write_step(slow, 0, Mode::Train, 0, 100.0f);

  const Trial trial = Trial::open(dir.path().string(), quick_options());
  EXPECT_EQ(trial.num_workers(), 2);
  EXPECT_EQ(trial.last_complete_step(), 0);
  EXPECT_EQ(trial.steps(), (std::vector<std::int64_t>{0}));
  EXPECT_EQ(trial.steps(Mode::Global, true), (std::vector<std::int64_t>{0, 1, 2}));
  EXPECT_EQ(trial.has_passed_step(0), StepState::Available);
  EXPECT_EQ(trial.has_passed_step(1), StepState::NotYetAvailable);
  EXPECT_EQ(trial.has_passed_step(7), StepState::NotYetAvailable);
  const Tensor loss = trial.tensor("Loss_output_0");
  EXPECT_EQ(loss.workers(0), (std::vector<std::string>{"worker_0", "worker_1"}));
  EXPECT_EQ(loss.value(0, Mode::Global, std::string("worker_1")).as_double(0), 100.0);
  EXPECT_EQ(loss.value(0).as_double(0), 0.0);  // default worker: the first by name
  EXPECT_EQ(loss.value(1).as_double(0), 1.0);  // incomplete step: worker_0's value
  // The last saves up to a step are among the complete steps, as steps() lists them.
  EXPECT_EQ(loss.prev_steps(5, 3), (std::vector<std::int64_t>{0}));
  EXPECT_EQ(loss.prev_steps(5, 3, Mode::Train), (std::vector<std::int64_t>{0}));
  EXPECT_THROW(loss.value(9), StepNotYetAvailable);
  EXPECT_THROW(trial.wait_for_steps({1}, Mode::Global, std::chrono::milliseconds(50)),
               StepNotYetAvailable);

  // A pinned view keeps its answers while the slow worker catches up.
  const Trial pinned = trial.pinned();
  std::thread catch_up([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    write_step(slow, 1, Mode::Train, 1, 100.0f);
    write_step(slow, 2, Mode::Train, 2, 100.0f);
  });
  trial.wait_for_steps({1, 2}, Mode::Global, std::chrono::seconds(20));
  catch_up.join();
  EXPECT_EQ(trial.last_complete_step(), 2);
  EXPECT_EQ(trial.steps(), (std::vector<std::int64_t>{0, 1, 2}));
  EXPECT_EQ(pinned.steps(), (std::vector<std::int64_t>{0}));
  EXPECT_EQ(pinned.tensor("Loss_output_0").workers(1), (std::vector<std::string>{"worker_0"}));
  EXPECT_EQ(trial.tensor("Loss_output_0").workers(1),
            (std::vector<std::string>{"worker_0", "worker_1"}));

  fast.write_end_marker();
  trial.refresh();
  EXPECT_TRUE(trial.loaded_all_steps());
  EXPECT_EQ(trial.has_passed_step(7), StepState::Unavailable);
}

// prev_steps(step, n) walks back from the step; it must give exactly the tail of steps() up to
// the step, in every mode, for tensors saved in one mode or several, between and beyond saves.
TEST(Trial, PrevStepsIsTheTailOfTheStepsUpToTheStep) {
  TempDir dir;
  JobSimulatorOptions options;
  options.output = dir.path() / "job";
  options.steps = 24;
  options.eval_every = 5;
  options.eval_steps = 3;
  options.save_interval = 2;
  options.layers = 2;
  options.tensor_size = 4;
  JobSimulator(options).run();
  const Trial trial = Trial::open(options.output.string(), quick_options());
  const std::vector<std::int64_t> globals = trial.steps();
  ASSERT_FALSE(globals.empty());
  std::size_t compared = 0;
  for (const std::string& name : trial.tensor_names()) {
    const Tensor tensor = trial.tensor(name);
    for (const Mode mode : {Mode::Global, Mode::Train, Mode::Eval}) {
      const std::vector<std::int64_t> all = tensor.steps(mode);
      for (std::int64_t step = -1; step <= globals.back() + 2; ++step) {
        std::vector<std::int64_t> up_to(all.begin(),
                                        std::upper_bound(all.begin(), all.end(), step));
        EXPECT_EQ(tensor.prev_steps(step, std::nullopt, mode), up_to)
            << name << " " << mode_name(mode) << " step " << step;
        for (const std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{5}}) {
          const std::vector<std::int64_t> tail(
              up_to.end() - static_cast<std::ptrdiff_t>(std::min(n, up_to.size())), up_to.end());
          EXPECT_EQ(tensor.prev_steps(step, n, mode), tail)
              << name << " " << mode_name(mode) << " step " << step << " n " << n;
          ++compared;
        }
      }
    }
  }
  EXPECT_GT(compared, 100u);
  // Saved in both modes (the loss) and in TRAIN only (gradients): both kinds were compared.
  EXPECT_FALSE(trial.tensor("CrossEntropyLoss_output_0").steps(Mode::Eval).empty());
}

TEST(Trial, RangeStepsLoadsOnlyThoseSteps) {
  TempDir dir;
  TrialWriter writer({.root = dir.path()});
  for (std::int64_t step = 0; step < 6; ++step) write_step(writer, step, Mode::Train, step, 0.0f);
  writer.write_collections(default_collections(1));
  writer.write_end_marker();
  TrialOptions options = quick_options();
  options.range_begin = 2;
  options.range_end = 4;
  const Trial trial = Trial::open(dir.path().string(), options);
  EXPECT_EQ(trial.steps(), (std::vector<std::int64_t>{2, 3}));
}

TEST(Trial, CorruptIndexFileIsReportedAndSkipped) {
  TempDir dir;
  TrialWriter writer({.root = dir.path()});
  for (std::int64_t step = 0; step < 3; ++step) write_step(writer, step, Mode::Train, step, 0.0f);
  writer.write_collections(default_collections(1));
  writer.write_end_marker();
  rulestream::testing::write_text_file(dir.path() / "index/000000000/000000000001_worker_0.json",
                                       "{\"meta\": {\"mode\": ");
  const Trial trial = Trial::open(dir.path().string(), quick_options());
  EXPECT_EQ(trial.steps(), (std::vector<std::int64_t>{0, 2}));
  ASSERT_EQ(trial.problems().size(), 1u);
  EXPECT_NE(trial.problems()[0].message.find("000000000001_worker_0.json"), std::string::npos);
}

// A refresh parses index files in batches (refresh_batch_bytes) and adds each batch before the
// next; a job opened a file at a time reads exactly as one opened in one batch, a corrupt file
// in the middle and the end of the job included.
TEST(Trial, AJobOpenedAFileAtATimeReadsAsOneOpenedAtOnce) {
  TempDir dir;
  TrialWriter first({.root = dir.path(), .worker = "worker_0"});
  TrialWriter second({.root = dir.path(), .worker = "worker_1"});
  first.write_collections(default_collections(2));
  second.write_collections(default_collections(2));
  for (std::int64_t step = 0; step < 6; ++step) {
    write_step(first, step, Mode::Train, step, 0.0f);
    write_step(second, step, Mode::Train, step, 10.0f);
  }
  first.write_end_marker();
  rulestream::testing::write_text_file(dir.path() / "index/000000000/000000000003_worker_1.json",
                                       "{\"meta\": {\"mode\": ");

  TrialOptions whole = quick_options();
  TrialOptions file_at_a_time = quick_options();
  file_at_a_time.refresh_batch_bytes = 1;
  const Trial expected = Trial::open(dir.path().string(), whole);
  const Trial trial = Trial::open(dir.path().string(), file_at_a_time);

  EXPECT_EQ(trial.steps(), (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(trial.steps(), expected.steps());
  EXPECT_EQ(trial.workers(), (std::vector<std::string>{"worker_0", "worker_1"}));
  EXPECT_EQ(trial.tensor_names(), expected.tensor_names());
  EXPECT_EQ(trial.tensor_names({.collection = "gradients"}),
            (std::vector<std::string>{"gradient/fc.weight"}));
  EXPECT_TRUE(trial.loaded_all_steps());
  EXPECT_TRUE(expected.loaded_all_steps());
  ASSERT_EQ(trial.problems().size(), 1u);
  EXPECT_NE(trial.problems()[0].message.find("000000000003_worker_1.json"), std::string::npos);
  for (std::int64_t step = 0; step < 6; ++step) {
    const std::vector<std::string> workers = step == 3
                                                 ? std::vector<std::string>{"worker_0"}
                                                 : std::vector<std::string>{"worker_0", "worker_1"};
    EXPECT_EQ(trial.tensor("Loss_output_0").workers(step), workers) << "step " << step;
    for (const std::string& worker : workers) {
      const float offset = worker == "worker_0" ? 0.0f : 10.0f;
      EXPECT_EQ(trial.tensor("Loss_output_0").value(step, Mode::Global, worker).as_double(0),
                static_cast<double>(step) + offset)
          << "step " << step << ", " << worker;
      EXPECT_EQ(trial.tensor("gradient/fc.weight").value(step, Mode::Global, worker).as_double(0),
                1.0 + offset)
          << "step " << step << ", " << worker;
    }
  }
}

TEST(Trial, CorruptRecordNamesFileAndOffset) {
  TempDir dir;
  TrialWriter writer({.root = dir.path()});
  write_step(writer, 0, Mode::Train, 0, 0.0f);
  writer.write_collections(default_collections(1));
  writer.write_end_marker();
  const auto event_file = dir.path() / "events/000000000000/000000000000_worker_0.tfevents";
  {
    std::fstream file(event_file, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(2);
    file.put('\x7f');  // inside the first record's length
  }
  const Trial trial = Trial::open(dir.path().string(), quick_options());
  try {
    trial.tensor("Loss_output_0").value(0);
    FAIL() << "a corrupt record must not decode";
  } catch (const FormatError& error) {
    EXPECT_NE(std::string(error.what()).find("000000000000_worker_0.tfevents"), std::string::npos);
    EXPECT_NE(std::string(error.what()).find("offset 0"), std::string::npos);
  }
  // The other tensor of the step is still readable.
  EXPECT_EQ(trial.tensor("gradient/fc.weight").value(0).size(), 4);
}

TEST(Trial, MissingAndNonTrialPathsAreClearErrors) {
  TempDir dir;
  EXPECT_THROW(Trial::open((dir.path() / "absent").string()), StorageError);
  rulestream::testing::write_text_file(dir.path() / "notes.txt", "hello");
  EXPECT_THROW(Trial::open(dir.path().string()), StorageError);
}

TEST(Trial, SavedReductionsAreServedAsReductions) {
  TempDir dir;
  TrialWriter writer({.root = dir.path()});
  writer.begin_step(0, Mode::Train, 0);
  writer.add_reduction("fc.weight", {Reduction::Max, false}, floats({7.5f}, {}));
  writer.add_reduction("fc.weight", {Reduction::Mean, true}, floats({0.25f}, {}));
  writer.add_shape("fc.weight", {4, 8});
  writer.end_step();
  writer.write_collections(default_collections(1));
  writer.write_end_marker();
  const Trial trial = Trial::open(dir.path().string(), quick_options());
  EXPECT_EQ(trial.tensor_names(), (std::vector<std::string>{"fc.weight"}));
  const Tensor weight = trial.tensor("fc.weight");
  EXPECT_EQ(weight.reduction_value(0, Reduction::Max).as_double(), 7.5);
  EXPECT_EQ(
      weight.reduction_value(0, Reduction::Mean, Mode::Global, std::nullopt, true).as_double(),
      0.25);
  EXPECT_THROW(weight.reduction_value(0, Reduction::Min), TensorUnavailableForStep);
  EXPECT_THROW(weight.value(0), TensorUnavailableForStep);
  EXPECT_EQ(weight.shape(0), (Shape{4, 8}));
  EXPECT_EQ(weight.reduction_values(0).size(), 2u);
}

// A second index file of a step and worker the trial has (smdebug writes one; a trial put
// together from copies of two runs can hold two) adds its records to that worker's save at the
// step: its reductions join the ones already there.
TEST(Trial, ASecondIndexFileOfAStepAddsItsReductions) {
  TempDir dir;
  {
    TrialWriter writer({.root = dir.path()});
    writer.begin_step(0, Mode::Train, 0);
    writer.add_reduction("fc.weight", {Reduction::Max, false}, floats({7.5f}, {}));
    writer.end_step();
    writer.write_collections(default_collections(1));
  }
  const Trial trial = Trial::open(dir.path().string(), quick_options());
  const Tensor weight = trial.tensor("fc.weight");
  ASSERT_EQ(weight.reduction_values(0).size(), 1u);

  TempDir second;
  {
    TrialWriter writer({.root = second.path()});
    writer.begin_step(0, Mode::Train, 0);
    writer.add_reduction("fc.weight", {Reduction::Min, false}, floats({-2.5f}, {}));
    writer.end_step();
  }
  // The second run's files under names of their own, its index naming its event file so.
  const std::string event = event_file_path(0, "worker_0");
  const std::string renamed = "events/000000000000/000000000000_worker_0_second.tfevents";
  std::filesystem::copy_file(second.path() / event, dir.path() / renamed);
  std::string index =
      rulestream::testing::read_text_file(second.path() / index_file_path(0, "worker_0"));
  const auto at = index.find(event);
  ASSERT_NE(at, std::string::npos);
  index.replace(at, event.size(), renamed);
  rulestream::testing::write_text_file(dir.path() / "index/000000001/000000000000_worker_0.json",
                                       index);

  trial.refresh();
  const auto values = weight.reduction_values(0);
  ASSERT_EQ(values.size(), 2u);
  EXPECT_EQ(values.at({Reduction::Max, false}).as_double(), 7.5);
  EXPECT_EQ(values.at({Reduction::Min, false}).as_double(), -2.5);
  EXPECT_EQ(weight.reduction_value(0, Reduction::Min).as_double(), -2.5);
}

}  // namespace
}  // namespace rulestream
