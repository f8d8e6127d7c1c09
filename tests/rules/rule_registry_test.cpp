#include "rules/rule_registry.hpp"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>

#include "apps/simulator/job_simulator.hpp"
#include "examples/custom_gradient_rule.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/sagemaker/all_zero_rule.hpp"
#include "rules/sagemaker/exploding_tensor_rule.hpp"
#include "rules/sagemaker/loss_not_decreasing_rule.hpp"
#include "rules/sagemaker/vanishing_gradient_rule.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using testing::TempDir;

class RuleRegistryTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    JobSimulatorOptions options;
    options.output = dir_->path() / "job";
    options.steps = 4;
    options.tensor_size = 16;
    JobSimulator(options).run();
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static RuleContext context() { return {Trial::open((dir_->path() / "job").string()), {}}; }

  // The message of the RuleConfigError that creating the rule throws ("" if none).
  static std::string create_error(std::string_view rule, const RuleParameters& parameters) {
    try {
      RuleRegistry::builtin().create(rule, context(), parameters);
    } catch (const RuleConfigError& error) {
      return error.what();
    }
    return "";
  }

  template <typename R>
  static const typename R::Options& options_of(const std::unique_ptr<Rule>& rule) {
    const auto* concrete = dynamic_cast<const R*>(rule.get());
    if (concrete == nullptr) throw std::logic_error("the registry built another rule type");
    return concrete->options();
  }

  static TempDir* dir_;
};
TempDir* RuleRegistryTest::dir_ = nullptr;

TEST_F(RuleRegistryTest, ListsTheBuiltinsSortedWithTheirParameters) {
  std::vector<std::string> names;
  for (const RuleSpec* spec : RuleRegistry::builtin().all()) {
    names.push_back(spec->name);
    EXPECT_FALSE(spec->description.empty()) << spec->name;
    for (const ParameterSpec& parameter : spec->parameters) {
      static const std::set<std::string> kTypes{"float",  "int",  "bool",
                                                "string", "list", "regex list"};
      EXPECT_TRUE(kTypes.contains(parameter.type)) << spec->name << " " << parameter.name;
      EXPECT_FALSE(parameter.description.empty()) << spec->name << " " << parameter.name;
    }
  }
  EXPECT_EQ(names, (std::vector<std::string>{"AllZero",
                                             "CheckInputImages",
                                             "ClassImbalance",
                                             "Confusion",
                                             "DeadRelu",
                                             "Divergence",
                                             "ExplodingTensor",
                                             "FeatureImportanceOverweight",
                                             "GradNormSpike",
                                             "GradientExplosion",
                                             "GradientVanishing",
                                             "LossNotDecreasing",
                                             "LossSpike",
                                             "MaxInitializationTime",
                                             "NLPSequenceRatio",
                                             "NonFinite",
                                             "Overfit",
                                             "OverfittingTrend",
                                             "Overtraining",
                                             "Plateau",
                                             "PoorWeightInitialization",
                                             "SaturatedActivation",
                                             "SimilarAcrossRuns",
                                             "StalledTrainingRule",
                                             "StepOutlier",
                                             "TensorVariance",
                                             "TreeDepth",
                                             "UnchangedTensor",
                                             "VanishingGradient",
                                             "WeightUpdateRatio"}));

  auto parameters = [](std::string_view rule) {
    std::vector<std::vector<std::string>> out;
    for (const auto& p : RuleRegistry::builtin().find(rule)->parameters) {
      out.push_back({p.name, p.type, p.default_value});
    }
    return out;
  };
  using Rows = std::vector<std::vector<std::string>>;
  EXPECT_EQ(parameters("VanishingGradient"), (Rows{{"threshold", "float", "0.0000001"}}));
  EXPECT_EQ(parameters("ExplodingTensor"), (Rows{{"collection_names", "list", ""},
                                                 {"tensor_regex", "regex list", ""},
                                                 {"only_nan", "bool", "False"}}));
  EXPECT_EQ(parameters("AllZero"), (Rows{{"collection_names", "list", ""},
                                         {"tensor_regex", "regex list", ""},
                                         {"threshold", "float", "100"}}));
  EXPECT_EQ(parameters("LossNotDecreasing"), (Rows{{"collection_names", "list", ""},
                                                   {"tensor_regex", "regex list", ""},
                                                   {"use_losses_collection", "bool", "True"},
                                                   {"num_steps", "int", "10"},
                                                   {"diff_percent", "float", "0.1"},
                                                   {"increase_threshold_percent", "float", "5"},
                                                   {"mode", "string", "GLOBAL"}}));
  EXPECT_EQ(parameters("ClassImbalance"),
            (Rows{{"threshold_imbalance", "float", "10"},
                  {"threshold_misprediction", "float", "0.7"},
                  {"samples", "int", "500"},
                  {"argmax", "bool", "False"},
                  {"labels_regex", "regex list", ".*labels"},
                  {"predictions_regex", "regex list", ".*predictions"}}));
  EXPECT_EQ(parameters("Overfit"), (Rows{{"tensor_regex", "regex list", ""},
                                         {"start_step", "int", "0"},
                                         {"patience", "int", "1"},
                                         {"ratio_threshold", "float", "0.1"}}));
  EXPECT_EQ(parameters("Overtraining"), (Rows{{"patience_train", "int", "5"},
                                              {"patience_validation", "int", "10"},
                                              {"delta", "float", "0.01"}}));
  EXPECT_EQ(parameters("SimilarAcrossRuns"), (Rows{{"other_trial", "string", ""},
                                                   {"collection_names", "list", ""},
                                                   {"tensor_regex", "regex list", ""}}));
  EXPECT_EQ(parameters("Confusion"), (Rows{{"category_no", "int", "None"},
                                           {"labels", "string", "labels"},
                                           {"predictions", "string", "predictions"},
                                           {"labels_collection", "string", "labels"},
                                           {"predictions_collection", "string", "predictions"},
                                           {"min_diag", "float", "0.9"},
                                           {"max_off_diag", "float", "0.1"}}));
  EXPECT_EQ(parameters("FeatureImportanceOverweight"),
            (Rows{{"threshold", "float", "0.8"},
                  {"nfeatures", "int", "3"},
                  {"tensor_regex", "regex list", ".*feature_importance/weight"}}));
  EXPECT_EQ(parameters("TreeDepth"), (Rows{{"depth", "float", "4"}}));
  EXPECT_EQ(parameters("StalledTrainingRule"), (Rows{{"threshold", "int", "1800"},
                                                     {"stop_training_on_fire", "bool", "False"},
                                                     {"training_job_name_prefix", "string", ""}}));
}

TEST_F(RuleRegistryTest, FindsRulesByNameAndAliasWhateverTheCaseAndUnderscores) {
  const RuleRegistry& registry = RuleRegistry::builtin();
  const RuleSpec* vanishing = registry.find("VanishingGradient");
  ASSERT_NE(vanishing, nullptr);
  for (const char* spelling : {"vanishing_gradient", "vanishinggradient", "VANISHING_GRADIENT",
                               "Vanishing_Gradient", " vanishing_gradient "}) {
    EXPECT_EQ(registry.find(spelling), vanishing) << spelling;
  }
  EXPECT_EQ(registry.find("loss_not_decreasing")->name, "LossNotDecreasing");
  EXPECT_EQ(registry.find("ALLZERO")->name, "AllZero");
  EXPECT_EQ(registry.find("exploding_tensor")->name, "ExplodingTensor");
  EXPECT_EQ(registry.find("Vanishing"), nullptr);
  EXPECT_EQ(registry.find("vanishing-gradient"), nullptr);
  EXPECT_EQ(registry.find(""), nullptr);
  EXPECT_EQ(registry.find("__"), nullptr);
}

TEST_F(RuleRegistryTest, CreatesEachBuiltinWithItsDefaults) {
  const auto vanishing = RuleRegistry::builtin().create("vanishing_gradient", context(), {});
  EXPECT_EQ(vanishing->name(), "VanishingGradient");
  EXPECT_EQ(options_of<VanishingGradientRule>(vanishing).threshold, 1e-7);

  const auto exploding = RuleRegistry::builtin().create("ExplodingTensor", context(), {});
  EXPECT_TRUE(options_of<ExplodingTensorRule>(exploding).selection.collections.empty());
  EXPECT_TRUE(options_of<ExplodingTensorRule>(exploding).selection.regexes.empty());
  EXPECT_FALSE(options_of<ExplodingTensorRule>(exploding).only_nan);

  const auto zero = RuleRegistry::builtin().create("AllZero", context(), {});
  EXPECT_EQ(options_of<AllZeroRule>(zero).threshold, 100.0);

  const auto loss = RuleRegistry::builtin().create("LossNotDecreasing", context(), {});
  const auto& options = options_of<LossNotDecreasingRule>(loss);
  EXPECT_TRUE(options.use_losses_collection);
  EXPECT_EQ(options.num_steps, 10);
  EXPECT_EQ(options.diff_percent, 0.1);
  EXPECT_EQ(options.increase_threshold_percent, 5.0);
  EXPECT_EQ(options.mode, Mode::Global);
}

TEST_F(RuleRegistryTest, DocumentedDefaultsParseToTheRulesDefaults) {
  // Written out as a user would copy them from `rulestream rules`, the defaults must build the
  // same rule as no parameters at all. SimilarAcrossRuns needs a run to compare with: the job
  // itself serves.
  for (const RuleSpec* spec : RuleRegistry::builtin().all()) {
    RuleContext with_other = context();
    with_other.other_trials.push_back(with_other.base_trial);
    RuleParameters explicit_defaults;
    for (const auto& parameter : spec->parameters) {
      explicit_defaults[parameter.name] = parameter.default_value;
    }
    if (spec->name == "TensorVariance") {
      // Both thresholds default to None, and a TensorVariance without either could never fire:
      // the defaults alone are a configuration error (tensor_variance_rule_test.cpp).
      EXPECT_THROW(RuleRegistry::builtin().create(spec->name, with_other, explicit_defaults),
                   RuleConfigError);
      continue;
    }
    const auto rule = RuleRegistry::builtin().create(spec->name, with_other, explicit_defaults);
    const auto plain = RuleRegistry::builtin().create(spec->name, with_other, {});
    EXPECT_EQ(rule->required_tensors().collections, plain->required_tensors().collections);
    EXPECT_EQ(rule->required_tensors().regexes, plain->required_tensors().regexes);
  }
  const auto zero = RuleRegistry::builtin().create(
      "AllZero", context(), {{"collection_names", ""}, {"tensor_regex", ""}, {"threshold", "100"}});
  EXPECT_EQ(options_of<AllZeroRule>(zero).threshold, 100.0);
  const auto vanishing =
      RuleRegistry::builtin().create("VanishingGradient", context(), {{"threshold", "0.0000001"}});
  EXPECT_EQ(options_of<VanishingGradientRule>(vanishing).threshold, 1e-7);
}

TEST_F(RuleRegistryTest, ReadsEveryParameterKind) {
  const auto loss = RuleRegistry::builtin().create("LossNotDecreasing", context(),
                                                   {{"rule_to_invoke", "LossNotDecreasing"},
                                                    {"collection_names", " extra_losses , ,more ,"},
                                                    {"tensor_regex", ".*loss$, ^val_"},
                                                    {"use_losses_collection", "false"},
                                                    {"num_steps", " +25 "},
                                                    {"diff_percent", "1e-1"},
                                                    {"increase_threshold_percent", "7.5"},
                                                    {"mode", "train"}});
  const auto& options = options_of<LossNotDecreasingRule>(loss);
  EXPECT_EQ(options.selection.collections, (std::vector<std::string>{"extra_losses", "more"}));
  EXPECT_EQ(options.selection.regexes, (std::vector<std::string>{".*loss$", "^val_"}));
  EXPECT_FALSE(options.use_losses_collection);
  EXPECT_EQ(options.num_steps, 25);
  EXPECT_EQ(options.diff_percent, 0.1);
  EXPECT_EQ(options.increase_threshold_percent, 7.5);
  EXPECT_EQ(options.mode, Mode::Train);

  for (const auto& [text, expected] :
       std::vector<std::pair<std::string, bool>>{{"True", true},
                                                 {"true", true},
                                                 {"TRUE", true},
                                                 {"1", true},
                                                 {"False", false},
                                                 {"false", false},
                                                 {"0", false},
                                                 {" False ", false}}) {
    const auto rule =
        RuleRegistry::builtin().create("ExplodingTensor", context(), {{"only_nan", text}});
    EXPECT_EQ(options_of<ExplodingTensorRule>(rule).only_nan, expected) << text;
  }
}

TEST_F(RuleRegistryTest, RejectsUnknownRulesAndParametersNamingThem) {
  EXPECT_EQ(create_error("Vanishing", {}),
            "unknown rule \"Vanishing\" (known: AllZero, CheckInputImages, ClassImbalance, "
            "Confusion, DeadRelu, Divergence, ExplodingTensor, FeatureImportanceOverweight, "
            "GradNormSpike, GradientExplosion, GradientVanishing, "
            "LossNotDecreasing, LossSpike, MaxInitializationTime, NLPSequenceRatio, NonFinite, "
            "Overfit, OverfittingTrend, Overtraining, Plateau, PoorWeightInitialization, "
            "SaturatedActivation, SimilarAcrossRuns, StalledTrainingRule, StepOutlier, "
            "TensorVariance, "
            "TreeDepth, UnchangedTensor, VanishingGradient, WeightUpdateRatio)");
  EXPECT_EQ(create_error("VanishingGradient", {{"treshold", "1e-5"}}),
            "rule VanishingGradient: unknown parameter \"treshold\" (known: threshold)");
  EXPECT_EQ(create_error("ExplodingTensor", {{"nan_only", "True"}, {"regex", "x"}}),
            "rule ExplodingTensor: unknown parameters \"nan_only\", \"regex\" (known: "
            "collection_names, tensor_regex, only_nan)");
}

TEST_F(RuleRegistryTest, RejectsBadValuesNamingRuleParameterAndValue) {
  const std::vector<std::tuple<std::string, RuleParameters, std::string>> cases{
      {"VanishingGradient",
       {{"threshold", "abc"}},
       "rule VanishingGradient: parameter threshold: \"abc\" is not a number"},
      {"VanishingGradient",
       {{"threshold", ""}},
       "rule VanishingGradient: parameter threshold: \"\" is not a number"},
      {"VanishingGradient",
       {{"threshold", "1e-7x"}},
       "rule VanishingGradient: parameter threshold: \"1e-7x\" is not a number"},
      {"VanishingGradient",
       {{"threshold", "nan"}},
       "rule VanishingGradient: parameter threshold: \"nan\" is not a finite number"},
      {"LossNotDecreasing",
       {{"num_steps", "ten"}},
       "rule LossNotDecreasing: parameter num_steps: \"ten\" is not an integer"},
      {"LossNotDecreasing",
       {{"num_steps", "10.5"}},
       "rule LossNotDecreasing: parameter num_steps: \"10.5\" is not an integer"},
      {"LossNotDecreasing",
       {{"num_steps", "99999999999999999999"}},
       "rule LossNotDecreasing: parameter num_steps: \"99999999999999999999\" is out of range"},
      {"LossNotDecreasing",
       {{"num_steps", "0"}},
       "rule LossNotDecreasing: parameter num_steps: \"0\" must be at least 1"},
      {"LossNotDecreasing",
       {{"diff_percent", "100"}},
       "rule LossNotDecreasing: parameter diff_percent: \"100\" is not a percentage in [0, 100)"},
      {"LossNotDecreasing",
       {{"mode", "TRIAN"}},
       "rule LossNotDecreasing: parameter mode: \"TRIAN\" is not a mode (GLOBAL, TRAIN, EVAL or "
       "PREDICT)"},
      {"LossNotDecreasing",
       {{"use_losses_collection", "yes"}},
       "rule LossNotDecreasing: parameter use_losses_collection: \"yes\" is not a boolean "
       "(True, False, 1 or 0)"},
      {"ExplodingTensor",
       {{"only_nan", "maybe"}},
       "rule ExplodingTensor: parameter only_nan: \"maybe\" is not a boolean (True, False, 1 or "
       "0)"},
      {"AllZero",
       {{"threshold", "150"}},
       "rule AllZero: parameter threshold: \"150\" is not a percentage between 0 and 100"},
  };
  for (const auto& [rule, parameters, message] : cases) {
    EXPECT_EQ(create_error(rule, parameters), message);
  }
  const std::string regex_error = create_error("AllZero", {{"tensor_regex", "relu, (unclosed"}});
  EXPECT_EQ(regex_error.rfind(
                "rule AllZero: parameter tensor_regex: \"(unclosed\" is not a valid regex: ", 0),
            0u)
      << regex_error;
}

TEST_F(RuleRegistryTest, ReportsWhatEachRuleReads) {
  auto required = [](std::string_view rule, const RuleParameters& parameters) {
    return RuleRegistry::builtin().create(rule, context(), parameters)->required_tensors();
  };
  EXPECT_EQ(required("VanishingGradient", {}).collections, (std::vector<std::string>{"gradients"}));
  EXPECT_EQ(required("LossNotDecreasing", {}).collections, (std::vector<std::string>{"losses"}));
  EXPECT_TRUE(required("LossNotDecreasing", {}).regexes.empty());
  const auto extra = required("LossNotDecreasing",
                              {{"collection_names", "val_losses"}, {"tensor_regex", "total_loss"}});
  EXPECT_EQ(extra.collections, (std::vector<std::string>{"losses", "val_losses"}));
  EXPECT_EQ(extra.regexes, (std::vector<std::string>{"total_loss"}));
  EXPECT_TRUE(required("ExplodingTensor", {}).empty());
  EXPECT_TRUE(required("AllZero", {}).empty());
  const auto zero =
      required("AllZero", {{"collection_names", "weights"}, {"tensor_regex", "relu.*_output"}});
  EXPECT_EQ(zero.collections, (std::vector<std::string>{"weights"}));
  EXPECT_EQ(zero.regexes, (std::vector<std::string>{"relu.*_output"}));
}

TEST_F(RuleRegistryTest, TakesUserRulesAndRefusesDuplicateNames) {
  RuleRegistry registry;
  registry.add(example::CustomGradientRule::spec());
  ASSERT_NE(registry.find("custom_gradient_rule"), nullptr);
  const auto rule = registry.create("CustomGradientRule", context(), {{"threshold", "3"}});
  EXPECT_EQ(rule->name(), "CustomGradientRule");
  EXPECT_THROW(registry.add(example::CustomGradientRule::spec()), std::invalid_argument);

  registry.add(vanishing_gradient_spec());
  RuleSpec clash = all_zero_spec();
  clash.name = "Zeros";
  clash.aliases = {"VANISHING_GRADIENT"};
  EXPECT_THROW(registry.add(clash), std::invalid_argument);
  RuleSpec nameless = all_zero_spec();
  nameless.name = "_";
  EXPECT_THROW(registry.add(nameless), std::invalid_argument);
  RuleSpec no_factory = all_zero_spec();
  no_factory.create = nullptr;
  EXPECT_THROW(registry.add(no_factory), std::invalid_argument);

  EXPECT_EQ(registry.all().size(), 2u);
  EXPECT_EQ(registry.all().front()->name, "CustomGradientRule");
}

TEST(ParameterReaderTest, ListsDropEmptyItemsAndTrimWhitespace) {
  const RuleParameters parameters{{"names", " a ,b,, c ,"}, {"empty", ""}, {"blank", " , "}};
  ParameterReader reader("Test", parameters);
  EXPECT_EQ(reader.list("names", {}), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(reader.list("empty", {"fallback"}).empty());
  EXPECT_TRUE(reader.list("blank", {"fallback"}).empty());
  EXPECT_EQ(reader.list("absent", {"fallback"}), (std::vector<std::string>{"fallback"}));
  EXPECT_NO_THROW(reader.finish());
}

TEST(ParameterReaderTest, FallsBackOnlyWhenAParameterIsAbsent) {
  const RuleParameters parameters{{"x", "2.5"}, {"n", "-3"}, {"s", " kept as is "}};
  ParameterReader reader("Test", parameters);
  EXPECT_EQ(reader.number("x", 1.0), 2.5);
  EXPECT_EQ(reader.number("y", 1.0), 1.0);
  EXPECT_EQ(reader.integer("n", 7), -3);
  EXPECT_EQ(reader.integer("m", 7), 7);
  EXPECT_EQ(reader.text("s", "f"), " kept as is ");
  EXPECT_EQ(reader.text("t", "f"), "f");
  EXPECT_TRUE(reader.boolean("b", true));
  EXPECT_NO_THROW(reader.finish());
}

TEST(ParameterReaderTest, FinishListsWhatTheRuleKnows) {
  const RuleParameters parameters{{"rule_to_invoke", "Test"}, {"extra", "1"}};
  ParameterReader reader("Test", parameters);
  reader.number("a", 1);
  reader.boolean("b", true);
  try {
    reader.finish();
    FAIL() << "expected RuleConfigError";
  } catch (const RuleConfigError& error) {
    EXPECT_STREQ(error.what(), "rule Test: unknown parameter \"extra\" (known: a, b)");
  }
  const RuleParameters only_invoke{{"rule_to_invoke", "Test"}};
  EXPECT_NO_THROW(ParameterReader("Test", only_invoke).finish());
}

}  // namespace
}  // namespace rulestream
