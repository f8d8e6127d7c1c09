"""smdebug's ``smdebug.trials``: ``create_trial``, and ``no_refresh`` (``smdebug.analysis.utils``)."""
from contextlib import contextmanager

from . import _rulestream, tensorboard

Trial = _rulestream.Trial


def create_trial(path, name=None, range_steps=None, check=False, index_mode=None, cache=False):
    """Opens the trial at a local folder or an ``s3://bucket/prefix``, as smdebug's create_trial.

    ``name`` defaults to the last component of the path. ``range_steps=(begin, end)`` loads only
    those steps (either end may be None). ``check``, ``index_mode`` and ``cache`` are accepted for
    smdebug's signature and change nothing: rulestream always reads through the index files,
    and keeps decoded values in a bounded cache of its own.

    A path that holds TensorBoard event files and no smdebug trial is read as a TensorBoard
    logdir: the trial is then a ``rulestream.tensorboard.TensorBoardTrial`` (its doc says what
    of the API applies); ``range_steps`` does not apply to it.
    """
    del check, index_mode, cache  # see the docstring
    logdir = tensorboard.open_logdir(path, name)
    if logdir is not None:
        if range_steps is not None:
            raise ValueError("range_steps: does not apply to a TensorBoard logdir ({})".format(
                path))
        return logdir
    return _rulestream._open_trial(str(path), name, range_steps)


@contextmanager
def no_refresh(trials):
    """Inside the block, the trials answer from the state they had when it began: no new steps
    or tensors appear (smdebug's ``no_refresh``). Takes a trial or a list of trials."""
    trials = list(trials) if isinstance(trials, (list, tuple)) else [trials]
    pinned = []
    try:
        for trial in trials:
            trial._pin()
            pinned.append(trial)
        yield
    finally:
        for trial in pinned:
            trial._unpin()
