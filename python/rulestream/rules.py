"""smdebug's ``smdebug.rules``: ``Rule`` to subclass, ``invoke_rule`` (seed 000), and
rulestream's built-in rules by name (``create_rule``)."""
from abc import ABC, abstractmethod

from . import _rulestream
from .exceptions import (RuleConfigError, RuleEvaluationConditionMet, StepUnavailable,
                         TensorUnavailable, TensorUnavailableForStep)
from .trials import no_refresh



def _logger():
    """The "rulestream" logger. `logging` is imported on first use, not with the package: it
    was about a tenth of `import rulestream` (python3 -X importtime), which counts towards the
    time a notebook waits for its first value, and reading values never logs."""
    import logging
    return logging.getLogger("rulestream")


class Rule(ABC):
    """Subclass it, take string parameters in ``__init__``, implement ``invoke_at_step``.

    ``invoke_at_step(step)`` returns True when the rule's condition is met at that global step.
    Both of smdebug's spellings of the constructor work: ``Rule(base_trial, other_trials=None)``
    as seed 000's example calls it, and ``Rule(base_trial, action_str, other_trials=None)``.
    """

    def __init__(self, base_trial, action_str=None, other_trials=None):
        if action_str:
            # smdebug's actions (stop the training job, e-mail, SMS) act on SageMaker; the CLI's
            # rules file has rulestream's own (stop actions, notify routing).
            raise RuleConfigError(
                "rule {}: action_str {!r}: actions are not supported by rulestream.Rule; "
                "configure them in a rules file for `rulestream watch`".format(
                    type(self).__name__, action_str))
        self.base_trial = base_trial
        self.other_trials = other_trials
        self.trials = [base_trial] + list(other_trials or [])
        self.logger = _logger()
        self.rule_name = type(self).__name__

    def set_required_tensors(self, step):
        """smdebug's hook to name what invoke_at_step will read; rulestream needs nothing."""

    @abstractmethod
    def invoke_at_step(self, step):
        """True when the rule's condition is met at the global step ``step``."""

    def invoke(self, step):
        """Waits for the step, evaluates it with the trials unchanging, and raises
        RuleEvaluationConditionMet when the condition is met (smdebug's Rule.invoke)."""
        self.base_trial.wait_for_steps([step])
        with no_refresh(self.trials):
            self.set_required_tensors(step)
            condition_met = self.invoke_at_step(step)
        if condition_met:
            raise RuleEvaluationConditionMet(self.rule_name, step)


def invoke_rule(rule_obj, start_step=0, end_step=None, raise_eval_cond=False):
    """Invokes ``rule_obj`` at each global step from ``start_step`` up to ``end_step``
    (exclusive), as smdebug's invoke_rule does.

    Steps where the data is missing (TensorUnavailableForStep, StepUnavailable,
    TensorUnavailable) are skipped. A met condition is logged and evaluation goes on, unless
    ``raise_eval_cond``, when RuleEvaluationConditionMet is raised; one that says
    ``end_of_rule`` ends the run. With ``end_step=None`` the run ends, as smdebug's does, with the
    NoMoreData that the first step past the end of the job raises.
    """
    step = start_step if start_step is not None else 0
    logger = _logger()
    logger.info("Started execution of rule %s at step %d", type(rule_obj).__name__, step)
    while end_step is None or step < end_step:
        try:
            rule_obj.invoke(step)
        except (TensorUnavailableForStep, StepUnavailable, TensorUnavailable) as e:
            logger.debug(str(e))
        except RuleEvaluationConditionMet as e:
            if raise_eval_cond:
                raise
            logger.debug(str(e))
            if e.end_of_rule:
                break
        step += 1
    logger.info("Ended execution of rule %s at end_step %d", type(rule_obj).__name__, step - 1)


def _parameter_text(rule, name, value):
    # SageMaker passes every rule parameter as a string; numbers and booleans written as Python
    # values are taken as Python spells them (str(1e-05) == "1e-05", str(True) == "True").
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, int, float)):
        return str(value)
    if isinstance(value, (list, tuple)) and all(isinstance(item, str) for item in value):
        return ",".join(value)  # a list parameter, as its comma-separated string
    raise RuleConfigError("rule {}: parameter {}: {!r} is not a string (rule parameters are "
                          "strings, as in SageMaker's RuleParameters)".format(rule, name, value))


class BuiltinRule(Rule):
    """A built-in rule (``rulestream rules`` lists them), made by ``create_rule``."""

    def __init__(self, name, base_trial, other_trials=None, **parameters):
        super().__init__(base_trial, other_trials=other_trials)
        texts = {key: _parameter_text(name, key, value) for key, value in parameters.items()}
        self._rule = _rulestream._create_builtin_rule(name, base_trial, list(other_trials or []),
                                                      texts)
        self.rule_name = self._rule.name
        self.parameters = texts

    def invoke_at_step(self, step):
        return self._rule.invoke_at_step(step)

    def invoke(self, step):
        # The C++ rule waits for the step and pins its own views of the trials.
        self._rule.invoke(step)

    @property
    def last_finding(self):
        """Why the last invocation that met the condition fired: message, tensors, figures."""
        return self._rule.last_finding


def create_rule(name, base_trial, other_trials=None, **parameters):
    """A built-in rule by name ("VanishingGradient" or "vanishing_gradient") with its
    parameters as strings, e.g. ``create_rule("VanishingGradient", trial, threshold="1e-5")``.
    RuleConfigError (a ValueError) names an unknown rule or parameter, or a value that does not
    parse."""
    return BuiltinRule(name, base_trial, other_trials, **parameters)


def builtin_rules():
    """Every built-in rule: name, aliases, description and parameters (name, type, default)."""
    return _rulestream._builtin_rule_specs()
