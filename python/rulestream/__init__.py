"""rulestream from Python: smdebug's Trial and Tensor API and its rules, over rulestream's C++.

A notebook written for smdebug changes ``from smdebug.trials import create_trial`` to
``from rulestream import create_trial`` and keeps working::

    from rulestream import create_trial, modes
    trial = create_trial("/path/to/trial")          # or "s3://bucket/prefix"
    trial.tensor("gradient/fc1.weight").value(10, mode=modes.TRAIN)   # numpy.ndarray

Custom rules subclass ``rulestream.Rule`` and run with ``rulestream.invoke_rule`` (seed 000);
built-in rules are made by name with ``rulestream.create_rule``.
"""
# modes, exceptions and tensor first: the compiled module looks their classes up as it loads.
from . import exceptions, modes, tensor  # noqa: F401
from ._rulestream import Collection, Tensor, Trial  # noqa: F401
from .exceptions import *  # noqa: F401,F403
from .rules import BuiltinRule, Rule, builtin_rules, create_rule, invoke_rule  # noqa: F401
from .tensor import StepState  # noqa: F401
from .tensorboard import TensorBoardTensor, TensorBoardTrial  # noqa: F401
from .trials import create_trial, no_refresh  # noqa: F401
