"""Rules from Python: Rule subclasses run with invoke_rule step by step against what smdebug's
own invoke_rule did on the sample trials (expected/<trial>.rules.json), a rule whose firing
steps are worked out by hand, raise_eval_cond, end_step and end_of_rule, and the built-in rules
created by name with string parameters."""
import numpy as np
import pytest

from conftest import SAMPLES, expected_rules, require_samples, trial_path
import rulestream
from rulestream import Rule, create_rule, create_trial, invoke_rule


# --- the rules of smdebug-samples' README, written against the Rule API as a user would -------

class VanishingGradientRule(Rule):
    def __init__(self, base_trial, threshold="0.0000001"):
        super().__init__(base_trial, other_trials=None)
        self.threshold = float(threshold)

    def invoke_at_step(self, step):
        for tname in self.base_trial.tensor_names(collection="gradients"):
            abs_mean = self.base_trial.tensor(tname).reduction_value(step, "mean", abs=True)
            if abs_mean < self.threshold:
                return True
        return False


class CustomGradientRule(VanishingGradientRule):
    def invoke_at_step(self, step):
        for tname in self.base_trial.tensor_names(collection="gradients"):
            abs_mean = self.base_trial.tensor(tname).reduction_value(step, "mean", abs=True)
            if abs_mean > self.threshold:
                return True
        return False


def saved_values(trial, step):
    for tname in trial.tensor_names():
        tensor = trial.tensor(tname)
        if step not in tensor.steps():
            continue
        try:
            yield tensor.value(step)
        except rulestream.TensorUnavailableForStep:
            continue  # reduction-only tensors


class ExplodingTensor(Rule):
    def __init__(self, base_trial):
        super().__init__(base_trial)

    def invoke_at_step(self, step):
        for value in saved_values(self.base_trial, step):
            if value.dtype.kind == "f" and not np.isfinite(value).all():
                return True
        return False


class AllZero(Rule):
    def __init__(self, base_trial, threshold="100"):
        super().__init__(base_trial)
        self.threshold = float(threshold)

    def invoke_at_step(self, step):
        for value in saved_values(self.base_trial, step):
            if value.dtype.kind in "fiub" and value.size and \
                    np.count_nonzero(value == 0) * 100 / value.size >= self.threshold:
                return True
        return False


PYTHON_RULES = {"VanishingGradientRule": VanishingGradientRule,
                "CustomGradientRule": CustomGradientRule,
                "ExplodingTensor": ExplodingTensor, "AllZero": AllZero}


def record_outcomes(rule):
    """Wraps rule.invoke as the samples' reference did: each step's outcome by name."""
    outcomes = {}
    invoke = rule.invoke

    def recording_invoke(step):
        try:
            invoke(step)
            outcomes[str(step)] = "False"
        except rulestream.RuleEvaluationConditionMet:
            outcomes[str(step)] = "True"
            raise
        except rulestream.RulestreamError as e:
            outcomes[str(step)] = type(e).__name__
            raise
    rule.invoke = recording_invoke
    return outcomes


def run_like_smdebug(rule, run):
    outcomes = record_outcomes(rule)
    args = run["invoke_rule_args"]
    ended_with = None
    try:
        invoke_rule(rule, start_step=args["start_step"], end_step=args["end_step"],
                    raise_eval_cond=args["raise_eval_cond"])
    except rulestream.RulestreamError as e:
        ended_with = type(e).__name__
    return outcomes, ended_with


def rule_runs(rules):
    """(trial, index) of every expected run of these rules with the default worker; one
    placeholder per trial without an expected file, so its absence fails or skips visibly."""
    for name in SAMPLES:
        try:
            runs = expected_rules(name)
        except OSError:
            yield pytest.param(name, None, id=name)
            continue
        for index, run in enumerate(runs):
            if run["rule"] in rules and run["worker_scope"].startswith("default"):
                yield pytest.param(name, index, id="{}-{}-{}".format(name, run["rule"], index))


@pytest.mark.parametrize("name,index", list(rule_runs(PYTHON_RULES)))
def test_python_rules_step_by_step_as_smdebug(name, index):
    require_samples()
    run = expected_rules(name)[index]
    params = {key: str(value) for key, value in run["params"].items()}
    rule = PYTHON_RULES[run["rule"]](create_trial(trial_path(name)), **params)
    outcomes, ended_with = run_like_smdebug(rule, run)
    assert outcomes == run["per_step_outcome"]
    assert [int(s) for s, o in outcomes.items() if o == "True"] == run["triggered_steps"]
    assert ended_with == run["invoke_rule_ended_with"]


# --- a rule worked out by hand -------------------------------------------------------------------

class LossAbove(Rule):
    """Fires when the loss is above `limit`. pt-exploding's loss (smdebug-samples' README) is
    1.2e3, 3.7e7 and 4e24 at steps 0-2, Inf at step 3 and NaN from step 4 on: above 1e20 at
    steps 2 and 3 only (NaN compares false)."""

    def __init__(self, base_trial, limit="1e20"):
        super().__init__(base_trial)
        self.limit = float(limit)
        self.steps_seen = []

    def invoke_at_step(self, step):
        self.steps_seen.append(step)
        tname = self.base_trial.tensor_names(regex="[Ll]oss")[0]
        return bool(self.base_trial.tensor(tname).value(step) > self.limit)


def test_hand_computed_rule_fires_at_steps_2_and_3():
    trial = create_trial(trial_path("pt-exploding"))
    rule = LossAbove(trial)
    outcomes = record_outcomes(rule)
    with pytest.raises(rulestream.NoMoreData):  # smdebug's invoke_rule ends this way
        invoke_rule(rule)
    assert [int(s) for s, o in outcomes.items() if o == "True"] == [2, 3]
    assert rule.steps_seen == list(range(32))  # every step of the job, then NoMoreData at 32
    assert outcomes["32"] == "NoMoreData"


def test_raise_eval_cond_raises_at_the_first_firing():
    rule = LossAbove(create_trial(trial_path("pt-exploding")))
    with pytest.raises(rulestream.RuleEvaluationConditionMet) as raised:
        invoke_rule(rule, start_step=0, end_step=None, raise_eval_cond=True)
    assert raised.value.step == 2
    assert raised.value.rule_name == "LossAbove"
    assert rule.steps_seen == [0, 1, 2]


def test_end_step_is_exclusive_and_start_step_is_where_it_starts():
    rule = LossAbove(create_trial(trial_path("pt-exploding")))
    invoke_rule(rule, start_step=1, end_step=3)  # no NoMoreData: it stops before the end
    assert rule.steps_seen == [1, 2]


def test_end_of_rule_stops_the_run():
    class StopsAtFive(Rule):
        def __init__(self, base_trial):
            super().__init__(base_trial)
            self.steps_seen = []

        def invoke(self, step):
            self.steps_seen.append(step)
            if step == 5:
                raise rulestream.RuleEvaluationConditionMet(self.rule_name, step, end_of_rule=True)

        def invoke_at_step(self, step):
            return False

    rule = StopsAtFive(create_trial(trial_path("pt-exploding")))
    invoke_rule(rule)
    assert rule.steps_seen == [0, 1, 2, 3, 4, 5]


# --- built-in rules by name ------------------------------------------------------------------------

BUILTIN_NAMES = {"VanishingGradientRule": "VanishingGradient", "ExplodingTensor": "ExplodingTensor",
                 "AllZero": "AllZero"}


@pytest.mark.parametrize("name,index", list(rule_runs(BUILTIN_NAMES)))
def test_builtin_rules_by_name_fire_where_smdebug_did(name, index):
    require_samples()
    run = expected_rules(name)[index]
    params = {key: str(value) for key, value in run["params"].items()}
    rule = create_rule(BUILTIN_NAMES[run["rule"]], create_trial(trial_path(name)), **params)
    assert isinstance(rule, Rule)
    outcomes, ended_with = run_like_smdebug(rule, run)
    assert [int(s) for s, o in outcomes.items() if o == "True"] == run["triggered_steps"]
    assert ended_with == run["invoke_rule_ended_with"]


def test_builtin_rule_says_why_it_fired():
    rule = create_rule("exploding_tensor", create_trial(trial_path("pt-exploding")))
    assert rule.rule_name == "ExplodingTensor"
    with pytest.raises(rulestream.RuleEvaluationConditionMet) as raised:
        invoke_rule(rule, raise_eval_cond=True)
    assert raised.value.step == 3  # the first Inf (the README's loss at step 3)
    finding = rule.last_finding
    assert finding["tensors"] and finding["message"]


def test_builtin_rules_are_listed():
    names = {spec["name"] for spec in rulestream.builtin_rules()}
    assert {"VanishingGradient", "ExplodingTensor", "AllZero", "LossNotDecreasing"} <= names
    vanishing = next(s for s in rulestream.builtin_rules() if s["name"] == "VanishingGradient")
    assert [p["name"] for p in vanishing["parameters"]][:1] == ["threshold"]


def test_bad_parameters_are_clear_python_errors():
    trial = create_trial(trial_path("pt-mlp-basic"))
    with pytest.raises(rulestream.RuleConfigError) as raised:
        create_rule("VanishingGradient", trial, threshold="abc")
    assert isinstance(raised.value, ValueError)
    assert "threshold" in str(raised.value) and "abc" in str(raised.value)
    with pytest.raises(rulestream.RuleConfigError, match="NoSuchRule"):
        create_rule("NoSuchRule", trial)
    with pytest.raises(rulestream.RuleConfigError, match="no_such_parameter"):
        create_rule("VanishingGradient", trial, no_such_parameter="1")
    with pytest.raises(rulestream.RuleConfigError, match="threshold"):
        create_rule("VanishingGradient", trial, threshold=object())
    with pytest.raises(rulestream.RuleConfigError, match="action_str"):
        VanishingGradientRule.__bases__[0].__init__(
            VanishingGradientRule.__new__(VanishingGradientRule), trial, "StopTraining")
