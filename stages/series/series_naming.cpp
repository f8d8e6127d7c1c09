#include "stages/series/series_naming.hpp"

#include <stdexcept>
#include <string_view>

namespace rulestream {
namespace {

// A word not glued to letters: "val" in "val_loss" and "eval/acc", not in "interval".
constexpr const char* kWordStart = "(?<![A-Za-z])";
constexpr const char* kWordEnd = "(?![A-Za-z])";

std::string word(const std::string& alternatives) {
  return std::string("(?i)") + kWordStart + "(?:" + alternatives + ")" + kWordEnd;
}

std::string last_folder(const std::string& run) {
  const auto slash = run.rfind('/');
  return slash == std::string::npos ? run : run.substr(slash + 1);
}

// `tag` without the word that names its mode: "train/loss" and "eval/loss" are "/loss",
// "Loss/train" and "Loss/test" "Loss/", "train_loss" and "val_loss" "_loss".
std::string without_mode(const SeriesNaming& naming, const std::string& tag) {
  for (const auto* patterns : {&naming.train, &naming.eval}) {
    for (const NameRegex& regex : *patterns) {
      if (const auto found = regex.find_in(tag)) {
        return tag.substr(0, found->first) + tag.substr(found->first + found->second);
      }
    }
  }
  return tag;
}

// Lightning logs one metric per step and per epoch as `<name>_step` and `<name>_epoch`: both
// measure what `<name>` (and its validation twin `val_<name>`) does, so they share its group.
std::string without_cadence(std::string tag) {
  for (const std::string_view suffix : {std::string_view("_step"), std::string_view("_epoch")}) {
    if (tag.size() > suffix.size() && tag.ends_with(suffix)) {
      tag.resize(tag.size() - suffix.size());
      break;
    }
  }
  return tag;
}

// What names a group: `tag` without its mode word and cadence, and without the separators they
// left at its ends ("train/loss", "val_loss", "loss" and "Loss/test" name "loss" and "Loss").
std::string group_name(const SeriesNaming& naming, const std::string& tag) {
  const std::string name = without_cadence(without_mode(naming, tag));
  constexpr std::string_view kSeparators = " _/.-";
  const auto first = name.find_first_not_of(kSeparators);
  if (first == std::string::npos) return name;
  const auto last = name.find_last_not_of(kSeparators);
  return name.substr(first, last - first + 1);
}

std::optional<Mode> mode_in(const SeriesNaming& naming, const std::string& text) {
  if (any_found_in(naming.train, text)) return Mode::Train;
  if (any_found_in(naming.eval, text)) return Mode::Eval;
  return std::nullopt;
}

}  // namespace

SeriesNaming SeriesNaming::defaults() {
  SeriesNaming naming;
  // Lightning's grad_norm helper names the total grad_2.0_norm_total (its per-parameter norms,
  // grad_2.0_norm/<name>, are not the model's).
  naming.gradient_norm = compile_name_regexes(
      {"(?i)grad(?:ient)?s?[ _/.-]?norm", "(?i)grad_\\d+(?:\\.\\d+)?_norm_total"});
  // "loss" as a word, not a loss scale (mixed precision's, which is no loss).
  naming.loss =
      compile_name_regexes({std::string("(?i)") + kWordStart + "loss(?![A-Za-z]|[ _/.-]?scale)"});
  naming.learning_rate = compile_name_regexes({word("lr|learning[ _-]?rate")});
  naming.gradient = compile_name_regexes({word("grad|grads|gradient|gradients")});
  // Episode returns and lengths (SB3's rollout/ep_rew_mean, CleanRL's charts/episodic_return,
  // RLlib's episode_reward_mean), the losses only RL has (value, policy, actor, critic, Q), and
  // PPO's diagnostics.
  const std::string start = std::string("(?i)") + kWordStart;
  naming.reinforcement = compile_name_regexes(
      {start + "ep(?:isode)?_?(?:rew|reward|return|len)", start + "episodic_(?:return|length)",
       start + "(?:policy(?:_gradient)?|value|vf|actor|critic|qf?\\d*)_loss", start + "approx_kl",
       start + "clip_?fraction", start + "explained_var"});
  naming.train = compile_name_regexes({word("train|training")});
  naming.eval = compile_name_regexes({word("val|valid|validation|eval|evaluation|test|dev")});
  return naming;
}

const std::vector<std::string>& SeriesNaming::keys() {
  static const std::vector<std::string> names{
      "loss", "gradient_norm", "learning_rate", "gradient", "reinforcement", "train", "eval"};
  return names;
}

void SeriesNaming::replace(const std::string& key, const std::vector<std::string>& patterns) {
  std::vector<NameRegex>* target = key == "loss"            ? &loss
                                   : key == "gradient_norm" ? &gradient_norm
                                   : key == "learning_rate" ? &learning_rate
                                   : key == "gradient"      ? &gradient
                                   : key == "reinforcement" ? &reinforcement
                                   : key == "train"         ? &train
                                   : key == "eval"          ? &eval
                                                            : nullptr;
  if (target == nullptr) {
    std::string known;
    for (const auto& name : keys()) known += (known.empty() ? "" : ", ") + name;
    throw std::invalid_argument("unknown TensorBoard name '" + key + "' (known: " + known + ")");
  }
  *target = compile_name_regexes(patterns);
}

SeriesInfo SeriesNaming::describe(const std::string& run, const std::string& tag,
                                  bool reinforcement_run) const {
  SeriesInfo info;
  info.run = run;
  info.tag = tag;
  if (any_found_in(gradient_norm, tag)) {
    info.role = SeriesRole::GradientNorm;
  } else if (any_found_in(loss, tag)) {
    info.role = SeriesRole::Loss;
  } else if (any_found_in(learning_rate, tag)) {
    info.role = SeriesRole::LearningRate;
  }
  const auto mode = mode_in(*this, tag);
  info.mode = mode ? *mode : mode_in(*this, last_folder(run)).value_or(Mode::Global);
  // A loss named for no mode, in a run named for none, is the training loss: Keras' and Hugging
  // Face's `loss` beside `val_loss` and `eval_loss`, a training loop's `loss`.
  if (info.mode == Mode::Global && info.role == SeriesRole::Loss) info.mode = Mode::Train;
  if (info.mode != Mode::Global) info.group = job_of(run) + "\n" + group_name(*this, tag);
  if (info.role == SeriesRole::Loss && (reinforcement_run || names_reinforcement(tag))) {
    info.role = SeriesRole::ReinforcementLoss;
  }
  return info;
}

bool SeriesNaming::names_reinforcement(const std::string& tag) const {
  return any_found_in(reinforcement, tag);
}

std::optional<Mode> SeriesNaming::mode_of_run(const std::string& run) const {
  return mode_in(*this, last_folder(run));
}

std::string SeriesNaming::job_of(const std::string& run) const {
  if (!mode_in(*this, last_folder(run))) return run;
  const auto slash = run.rfind('/');
  return slash == std::string::npos ? std::string(".") : run.substr(0, slash);
}

SeriesInfo SeriesNaming::describe_histogram(const std::string& run, const std::string& tag,
                                            const std::string& figure) const {
  SeriesInfo info = describe(run, tag);
  info.role = any_found_in(gradient, tag) ? SeriesRole::Gradient : SeriesRole::Other;
  info.figure = figure;
  return info;
}

}  // namespace rulestream
