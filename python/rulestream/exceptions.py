"""smdebug's exceptions (``smdebug.exceptions``), with the same names, constructor arguments
and attributes, so that ``except StepUnavailable`` in a notebook or a rule keeps working.

rulestream raises them from C++ with a message that names the tensor, step and file; the
smdebug wording is what ``str()`` gives when an exception is raised from Python without one.
Every class derives from ``RulestreamError``; the errors smdebug has no name for also derive from
the Python exception a caller would expect (``ValueError`` for a bad rule parameter, ``OSError``
for a path that cannot be read).
"""
from .modes import ModeKeys

__all__ = [
    "RulestreamError",
    "StepNotYetAvailable",
    "StepUnavailable",
    "TensorUnavailableForStep",
    "ShapeUnavailableForStep",
    "TensorUnavailable",
    "InvalidWorker",
    "NoMoreData",
    "RuleEvaluationConditionMet",
    "MissingCollectionFiles",
    "IndexReaderException",
    "CollectionUnavailable",
    "ReductionUnsupported",
    "FormatError",
    "StorageError",
    "RuleConfigError",
]


class RulestreamError(Exception):
    """Base of every error rulestream raises on purpose."""

    def __init__(self, *args, message=None):
        super().__init__(*args)
        self._message = message

    def _default_message(self):
        return super().__str__()

    def __str__(self):
        return self._message if self._message is not None else self._default_message()


class StepNotYetAvailable(RulestreamError):
    """The step has not been seen yet; it may still come while the job runs."""

    def __init__(self, step, mode, message=None):
        super().__init__(step, mode, message=message)
        self.step = step
        self.mode = mode

    def _default_message(self):
        return "Step {} of mode {} not yet available".format(self.step, self.mode)


class StepUnavailable(RulestreamError):
    """The step was not saved by the training job: nothing will be available for it."""

    def __init__(self, step, mode, message=None):
        super().__init__(step, mode, message=message)
        self.step = step
        self.mode = mode

    def _default_message(self):
        return "Step {} of mode {} is not available as it was not saved".format(
            self.step, self.mode)


class TensorUnavailableForStep(RulestreamError):
    """The tensor was saved, but not at this step; it never will be."""

    def __init__(self, tname, step, mode=ModeKeys.GLOBAL, has_reductions=False, message=None):
        super().__init__(tname, step, mode, has_reductions, message=message)
        self.tname = tname
        self.step = step
        self.mode = mode
        self.has_reductions = has_reductions

    def _default_message(self):
        text = "Value for tensor {} is not available for step {} with mode {} as it was not " \
               "saved.".format(self.tname, self.step, self.mode.name)
        if self.has_reductions:
            text += " This tensor has reductions saved for this step. You might want to " \
                    "query for the reductions."
        return text


class ShapeUnavailableForStep(RulestreamError):
    """Neither a saved shape nor a value exists for the tensor at this step."""

    def __init__(self, tname, step, mode=ModeKeys.GLOBAL, message=None):
        super().__init__(tname, step, mode, message=message)
        self.tname = tname
        self.step = step
        self.mode = mode

    def _default_message(self):
        return "Shape for tensor {} is not available for step {} with mode {} as it was not " \
               "saved.".format(self.tname, self.step, self.mode.name)


class TensorUnavailable(RulestreamError):
    """The trial has not seen this tensor at any step."""

    def __init__(self, tname, message=None):
        super().__init__(tname, message=message)
        self.tname = tname

    def _default_message(self):
        return "Tensor {} was not saved.".format(self.tname)


class InvalidWorker(RulestreamError):
    """A worker that did not save this tensor at this step."""

    def __init__(self, worker, message=None):
        super().__init__(worker, message=message)
        self.worker = worker

    def _default_message(self):
        return "Invalid Worker: {}".format(self.worker)


class NoMoreData(RulestreamError):
    """The training job has ended: there will be no more steps or tensors."""

    def __init__(self, msg="", message=None):
        super().__init__(msg, message=message)
        self.msg = msg

    def _default_message(self):
        return self.msg


class RuleEvaluationConditionMet(RulestreamError):
    """A rule's condition was met at a step (raised by Rule.invoke)."""

    def __init__(self, rule_name, step, end_of_rule=False, message=None):
        super().__init__(rule_name, step, end_of_rule, message=message)
        self.rule_name = rule_name
        self.step = step
        self.end_of_rule = end_of_rule

    def _default_message(self):
        return "Evaluation of the rule {} at step {} resulted in the condition being " \
               "met".format(self.rule_name, self.step)


class MissingCollectionFiles(RulestreamError):
    """The training job saved no collection files: the hook was probably not configured."""

    def _default_message(self):
        return "Training job has ended. All the collection files could not be loaded"


class IndexReaderException(RulestreamError):
    """An index file could not be read (smdebug's name for it)."""


class CollectionUnavailable(RulestreamError, KeyError):
    """A collection the training job did not declare (a KeyError, as a dict lookup is)."""

    def __str__(self):
        return RulestreamError.__str__(self)


class ReductionUnsupported(RulestreamError, ValueError):
    """A reduction that cannot be taken of this value (strings, min of an empty tensor)."""


class FormatError(IndexReaderException):
    """Bytes on disk that do not follow smdebug's format: a bad CRC, malformed JSON or proto."""


class StorageError(RulestreamError, OSError):
    """A path that cannot be read: missing, not a trial, permission denied, S3 refusing."""

    def __str__(self):
        return RulestreamError.__str__(self)


class RuleConfigError(RulestreamError, ValueError):
    """A bad rule configuration: unknown rule or parameter, or a value that does not parse.
    The message names the rule, the parameter and the value."""
