"""smdebug's modes (``smdebug.modes``): ``rulestream.modes.TRAIN`` and the others.

The numbers are smdebug's ModeKeys, the ones written into event records, so a mode compares
and prints as it does in smdebug (``modes.TRAIN.name == "TRAIN"``).
"""
from enum import Enum


class ModeKeys(Enum):
    TRAIN = 1
    EVAL = 2
    PREDICT = 3
    GLOBAL = 4


TRAIN = ModeKeys.TRAIN
EVAL = ModeKeys.EVAL
PREDICT = ModeKeys.PREDICT
GLOBAL = ModeKeys.GLOBAL

ALLOWED_MODES = [TRAIN, EVAL, PREDICT, GLOBAL]
ALLOWED_MODE_NAMES = [mode.name for mode in ALLOWED_MODES]
