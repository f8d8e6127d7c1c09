#pragma once

// The built-in rules, one RuleSpec each (name, aliases, parameters with their defaults, and the
// factory from string parameters): what RuleRegistry::builtin() registers. Each function is
// defined in its rule's .cpp (rules/sagemaker/, rules/series/), so a built-in rule needs no
// header of its own to be registered: a rule has a header only where another file uses its
// class (a test that reads its options or builds it directly).

#include "rules/rule_registry.hpp"

namespace rulestream {

// SageMaker Debugger's built-in rules (rules/sagemaker/), in the order of SageMaker's list.
RuleSpec dead_relu_spec();
RuleSpec exploding_tensor_spec();
RuleSpec poor_weight_initialization_spec();
RuleSpec saturated_activation_spec();
RuleSpec vanishing_gradient_spec();
RuleSpec weight_update_ratio_spec();
RuleSpec all_zero_spec();
RuleSpec class_imbalance_spec();
RuleSpec loss_not_decreasing_spec();
RuleSpec overfit_spec();
RuleSpec overtraining_spec();
RuleSpec similar_across_runs_spec();
RuleSpec stalled_training_rule_spec();
RuleSpec tensor_variance_spec();
RuleSpec unchanged_tensor_spec();
RuleSpec check_input_images_spec();
RuleSpec nlp_sequence_ratio_spec();
RuleSpec confusion_spec();
RuleSpec feature_importance_overweight_spec();
RuleSpec tree_depth_spec();

// SageMaker's profiler rules on step times (rules/sagemaker/; smdebug trials and series formats
// alike).
RuleSpec step_outlier_spec();
RuleSpec max_initialization_time_spec();

// rulestream's own rules over series of scalars (rules/series/).
RuleSpec non_finite_spec();
RuleSpec loss_spike_spec();       // rules/series/series_spike_rule.cpp
RuleSpec grad_norm_spike_spec();  // rules/series/series_spike_rule.cpp
// The judgement for series (rules/default_rules.hpp runs them on logdirs by default).
RuleSpec divergence_spec();
RuleSpec gradient_explosion_spec();  // rules/series/gradient_norm_rules.cpp
RuleSpec gradient_vanishing_spec();  // rules/series/gradient_norm_rules.cpp
RuleSpec overfitting_trend_spec();
RuleSpec plateau_spec();

}  // namespace rulestream
