"""TensorBoard logdirs through smdebug's Trial API: what ``create_trial`` returns for a folder
(or ``s3://`` prefix) that holds TensorBoard event files and no smdebug trial.

The logdir is read once, by rulestream's C++ reader (the one ``rulestream inspect`` and
``replay`` use: docs/tensorboard.md), when the trial is created. Each scalar or histogram tag of
each run is a tensor named ``<run>/<tag>`` (the bare tag for the logdir's own run, ``.``); its
steps are TensorBoard's view of the run: a value at a step at or below the last one kept
replaces the kept values from that step on (a run restarted from a checkpoint), so each step has
one value. What applies and what does not:

- ``tensor(name).value(step)`` of a scalar is a 0-d ``numpy.float64`` array (float32 values
  widened exactly); ``values()`` maps every step to one. A histogram's buckets are not kept:
  ``histogram(step)`` gives its figures (min, max, num, sum, sum_squares, mean) and
  ``reduction_value`` the reductions they allow; its ``value()`` raises NotImplementedError.
- Steps are global steps: ``mode=`` takes None or ``modes.GLOBAL`` only.
- There are no workers (``worker=`` takes None only; ``workers()`` raises NotImplementedError),
  no collections (``collections()`` is empty) and no refresh: create the trial again to see
  values written since.
- Text, image, audio, hparams and other tags are not tensors: ``other_tags()`` lists them.
"""
import math
import re

import numpy as np

from . import _rulestream, modes
from .exceptions import (CollectionUnavailable, InvalidWorker, ReductionUnsupported,
                         TensorUnavailable, TensorUnavailableForStep)

_REDUCTIONS = ("min", "max", "mean", "prod", "std", "variance", "sum", "l1", "l2")


def _check_mode(mode):
    if mode is not None and mode != modes.GLOBAL:
        raise ValueError("mode: a TensorBoard logdir's steps are global steps; "
                         "pass None or modes.GLOBAL, not {}".format(mode))


def _check_worker(worker):
    if worker is not None:
        raise InvalidWorker(worker, message="worker {!r}: a TensorBoard logdir has no workers "
                                            "(each run is a series of tensors of its own)"
                            .format(worker))


def _regexes(regex):
    if regex is None:
        return []
    if isinstance(regex, str):
        return [re.compile(regex)]
    return [re.compile(pattern) for pattern in regex]


class TensorBoardTensor:
    """One scalar or histogram tag of one run, as smdebug's Tensor where that applies."""

    def __init__(self, name, series):
        self._name = name
        self._series = series
        self._steps = series["steps"]
        self._index = None  # step -> position, built on first use

    @property
    def name(self):
        return self._name

    @property
    def run(self):
        return self._series["run"]

    @property
    def tag(self):
        return self._series["tag"]

    @property
    def kind(self):
        """``"scalar"`` or ``"histogram"``."""
        return self._series["kind"]

    def _positions(self):
        if self._index is None:
            self._index = {int(s): i for i, s in enumerate(self._steps)}
        return self._index

    def _at(self, step):
        try:
            return self._positions()[step]
        except KeyError:
            raise TensorUnavailableForStep(self._name, step) from None

    def steps(self, mode=None, show_incomplete_steps=False):
        del show_incomplete_steps  # every step of a logdir read once is complete
        _check_mode(mode)
        return self._steps.tolist()

    def prev_steps(self, step, n, mode=None):
        """The last ``n`` steps before ``step`` (smdebug's prev_steps)."""
        _check_mode(mode)
        earlier = self._steps[:np.searchsorted(self._steps, step, side="left")]
        return earlier[max(len(earlier) - n, 0):].tolist()

    def wall_time(self, step, mode=None):
        """When the value at ``step`` was written (seconds since the epoch, as stored)."""
        _check_mode(mode)
        return float(self._series["wall_times"][self._at(step)])

    def value(self, step_num, mode=None, worker=None):
        _check_mode(mode)
        _check_worker(worker)
        at = self._at(step_num)
        if self.kind != "scalar":
            raise NotImplementedError(
                "{} is a histogram: its buckets are not kept; histogram({}) gives its figures "
                "and reduction_value() the reductions they allow".format(self._name, step_num))
        return np.array(self._series["values"][at])

    def values(self, mode=None, worker=None):
        _check_mode(mode)
        _check_worker(worker)
        if self.kind != "scalar":
            raise NotImplementedError("{} is a histogram: see histogram(step)".format(self._name))
        return {int(step): np.array(value)
                for step, value in zip(self._steps, self._series["values"])}

    def histogram(self, step, mode=None):
        """A histogram's figures at ``step``: min, max, num, sum, sum_squares (None where the
        logdir has none: a Keras / TF2 ``[k,3]`` histogram tensor) and mean."""
        _check_mode(mode)
        at = self._at(step)
        if self.kind != "histogram":
            raise NotImplementedError("{} is a scalar: see value(step)".format(self._name))
        figures = {key: float(self._series[key][at])
                   for key in ("min", "max", "num", "sum", "sum_squares", "mean")}
        if math.isnan(figures["sum_squares"]):
            figures["sum_squares"] = None
        return figures

    def reduction_value(self, step_num, reduction_name, mode=None, worker=None, abs=False):
        """smdebug's reductions where the data allows them: of a scalar, as numpy computes them
        on a one-element array; of a histogram, min, max, mean and sum from its figures, and
        variance, std and l2 from its sum of squares where it has one."""
        if reduction_name not in _REDUCTIONS:
            raise ValueError("reduction_name: \"{}\" is not a reduction ({})".format(
                reduction_name, ", ".join(_REDUCTIONS)))
        _check_mode(mode)
        _check_worker(worker)
        at = self._at(step_num)
        if self.kind == "scalar":
            return self._scalar_reduction(float(self._series["values"][at]), reduction_name, abs)
        return self._histogram_reduction(at, reduction_name, abs)

    def reduction_values(self, step_num, mode=None, worker=None):
        """Every reduction that reduction_value gives at the step, keyed (name, abs)."""
        result = {}
        for name in _REDUCTIONS:
            for absolute in (False, True):
                try:
                    result[(name, absolute)] = self.reduction_value(step_num, name, mode, worker,
                                                                    absolute)
                except ReductionUnsupported:
                    pass
        return result

    @staticmethod
    def _scalar_reduction(value, name, absolute):
        if absolute or name in ("l1", "l2"):
            value = math.fabs(value)
        if name in ("std", "variance"):
            return np.float64(0.0) if math.isfinite(value) else np.float64(math.nan)
        return np.float64(value)

    def _histogram_reduction(self, at, name, absolute):
        figure = lambda key: float(self._series[key][at])  # noqa: E731
        if absolute:
            raise ReductionUnsupported(
                "{}: a histogram's figures give no reduction of absolute values".format(
                    self._name))
        if name in ("min", "max", "mean", "sum"):
            return np.float64(figure(name))
        sum_squares = figure("sum_squares")
        if name in ("variance", "std", "l2") and not math.isnan(sum_squares):
            if name == "l2":
                return np.float64(math.sqrt(sum_squares))
            mean = figure("mean")
            variance = sum_squares / figure("num") - mean * mean
            return np.float64(variance if name == "variance" else math.sqrt(max(variance, 0.0)))
        raise ReductionUnsupported("{}: a histogram's figures do not give {}{}".format(
            self._name, name, " (this one has no sum of squares)" if name in
            ("variance", "std", "l2") else ""))

    def workers(self, step_num=None, mode=None):
        raise NotImplementedError("a TensorBoard logdir has no workers")

    def shape(self, step_num, mode=None, worker=None):
        self.value(step_num, mode, worker)  # the same errors
        return ()

    def __repr__(self):
        return "<rulestream TensorBoardTensor {} ({})>".format(self._name, self.kind)


class TensorBoardTrial:
    """A TensorBoard logdir as smdebug's Trial where that applies (see the module's doc)."""

    format = "tensorboard"

    def __init__(self, logdir, name=None):
        self._logdir = logdir
        path = logdir.path.rstrip("/")
        self._name = name if name is not None else path.rsplit("/", 1)[-1]
        self._tensors = {}
        for series in logdir.series:
            tensor_name = series["tag"] if series["run"] == "." else \
                "{}/{}".format(series["run"], series["tag"])
            if tensor_name in self._tensors:
                # A run "a" with tag "b/c" and a run "a/b" with tag "c": the names would clash.
                raise ValueError("{}: two tags would both be named {!r} (runs {!r} and {!r}); "
                                 "open the runs' folders as trials of their own".format(
                                     path, tensor_name, self._tensors[tensor_name].run,
                                     series["run"]))
            self._tensors[tensor_name] = TensorBoardTensor(tensor_name, series)

    @property
    def name(self):
        return self._name

    @property
    def path(self):
        return self._logdir.path

    @property
    def problems(self):
        """What could not be read, one line each naming the file and the offset."""
        return list(self._logdir.problems)

    def runs(self):
        """Every run (folder holding event files, relative to the logdir; ``.`` for itself)."""
        return list(self._logdir.runs)

    def other_tags(self):
        """The tags that are not tensors here, as (run, tag, kind): text, image, other."""
        return list(self._logdir.other_tags)

    def tensor_names(self, step=None, mode=None, regex=None, collection=None):
        _check_mode(mode)
        if collection is not None:
            raise CollectionUnavailable(collection)
        patterns = _regexes(regex)
        names = []
        for name, tensor in self._tensors.items():
            if patterns and not any(p.search(name) for p in patterns):
                continue
            if step is not None and step not in tensor._positions():
                continue
            names.append(name)
        return names

    tensors = tensor_names  # smdebug's older spelling, as rulestream.Trial has it

    def tensor(self, tname):
        try:
            return self._tensors[tname]
        except KeyError:
            raise TensorUnavailable(tname) from None

    def has_tensor(self, tname):
        return tname in self._tensors

    def steps(self, mode=None, show_incomplete_steps=False):
        del show_incomplete_steps
        _check_mode(mode)
        every = set()
        for tensor in self._tensors.values():
            every.update(tensor._steps.tolist())
        return sorted(every)

    def modes(self):
        return [modes.GLOBAL]

    def workers(self):
        raise NotImplementedError("a TensorBoard logdir has no workers")

    def collections(self):
        return {}

    def collection(self, coll_name):
        raise CollectionUnavailable(coll_name)

    def __repr__(self):
        return "<rulestream TensorBoardTrial {} at {}>".format(self._name, self.path)


def open_logdir(path, name=None):
    """A TensorBoardTrial for the logdir at ``path``, or None where ``path`` holds an smdebug
    trial or nothing yet."""
    logdir = _rulestream._open_tensorboard_logdir(str(path))
    return None if logdir is None else TensorBoardTrial(logdir, name)
