"""What smdebug keeps in ``smdebug.core.tensor`` besides the Tensor class: ``StepState``, the
answer of ``Trial.has_passed_step``. (rulestream's Tensor class is ``rulestream.Tensor``.)"""
from enum import Enum


class StepState(Enum):
    UNAVAILABLE = 0  # the step was not saved, or lies beyond the end of the job
    AVAILABLE = 1  # the step was saved by every worker
    NOT_YET_AVAILABLE = 2  # the job is still running and may still save it
