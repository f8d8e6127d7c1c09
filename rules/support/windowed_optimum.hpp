#pragma once

#include <cstdint>
#include <optional>

namespace rulestream {

// The mean loss over a window of consecutive saves of one series, and where the window lay.
struct WindowMean {
  double mean = 0.0;
  std::int64_t saves = 0;
  std::int64_t first_step = 0;  // global steps of its first and last save
  std::int64_t last_step = 0;
};

// Whether a loss series is still improving, judged on the means of consecutive windows of saves
// rather than on single batches: one lucky batch must not set an optimum that the following
// batches never beat (per-batch losses are noisy; their means over a window much less so).
// The caller adds saves and says when a window ends (Overtraining: after patience_train TRAIN
// saves, or at the end of the evaluation passes that hold patience_validation EVAL saves).
class WindowedOptimum {
 public:
  explicit WindowedOptimum(double delta) : delta_(delta) {}

  // Adds one save to the open window.
  void add(double loss, std::int64_t step);

  // Saves in the open window.
  std::int64_t open_saves() const { return open_.saves; }

  // Ends the open window (when it holds any save) and judges it: it improves when its mean is
  // below the best earlier window mean by more than delta (the first window always does). A
  // window whose mean is NaN or infinite is dropped unjudged: a diverged loss says nothing about
  // an optimum (ExplodingTensor reports it), and must not become one that no finite mean beats.
  void close_window();

  // True when the latest judged window did not improve: the series has gone a whole window
  // without beating its best.
  bool stalled() const { return stalled_; }

  const std::optional<WindowMean>& best() const { return best_; }
  const std::optional<WindowMean>& latest() const { return latest_; }

 private:
  double delta_;
  WindowMean open_;  // mean holds the running sum until the window closes
  std::optional<WindowMean> best_;
  std::optional<WindowMean> latest_;
  bool stalled_ = false;
};

}  // namespace rulestream
