"""reduction_value for every reduction (plain and abs) of every value of every sample trial,
against what smdebug reported: numpy's result dtype and type, and the figure. Saved reductions
are read, so they match exactly; computed ones within a rounding bound scaled to the data.
Where rulestream deliberately differs from smdebug's reader (FORMAT.md, last section: int8 read
as int8, element-wise l1/l2, no silent integer wrap-around, accurate float16 std/variance and
no overflow of float32 intermediates) the figure is checked against numpy in float64 (long
double for integers) on the same value instead."""
import math

import numpy as np

from conftest import number, smdebug_lost_value
from rulestream import create_trial
import rulestream

REDUCTIONS = ["min", "max", "mean", "prod", "std", "variance", "sum", "l1", "l2"]
ROUNDING = {"float16": 2e-3, "float32": 2e-5, "float64": 1e-12}
SMDEBUG_ERRORS_FOR_STRINGS = {"UFuncTypeError", "ValueError", "TypeError"}


def reference(values, reduction):
    """The reduction in long double, whose range holds squares of any float64 (exact integers
    for integer sums and products)."""
    if values.dtype.kind in "iub":
        exact = [int(v) for v in values.ravel()]
        if reduction == "sum":
            return sum(exact)
        if reduction == "prod":
            return math.prod(exact)
    x = values.astype(np.longdouble).ravel()
    if reduction == "min":
        return x.min()
    if reduction == "max":
        return x.max()
    if reduction == "mean":
        return x.mean()
    if reduction == "prod":
        return x.prod()
    if reduction == "std":
        return x.std()
    if reduction == "variance":
        return x.var()
    if reduction == "sum":
        return x.sum()
    if reduction == "l1":
        return np.abs(x).sum()
    return np.sqrt((x * x).sum())


@np.errstate(over="ignore")  # a product of magnitudes may overflow: the bound is then inf
def scale(values, reduction):
    """The size of the rounding error a reduction can carry, per unit of relative precision
    (ROUNDING): sums and norms err by about the rounding of the sum of magnitudes times the
    depth of the summation; a product by a rounding per factor."""
    x = np.abs(values.astype(np.longdouble).ravel())
    if reduction == "prod":
        rounding = np.finfo(values.dtype).eps / 2 if values.dtype.kind == "f" else 0.0
        return float(np.abs(x.prod())) * x.size * rounding / ROUNDING.get(values.dtype.name, 1.0)
    if reduction in ("sum", "l1"):
        return float(x.sum()) * max(1.0, math.log2(max(x.size, 2)))
    if reduction == "mean":
        return float(x.mean()) * max(1.0, math.log2(max(x.size, 2)))
    if reduction == "variance":
        return float((x * x).mean()) * 4
    if reduction in ("std", "l2"):
        return math.sqrt(float((x * x).mean() if reduction == "std" else (x * x).sum())) * 4
    return 0.0


def close(ours, wanted, dtype, bound):
    if math.isnan(wanted) or math.isnan(ours):
        return math.isnan(wanted) and math.isnan(ours)
    if math.isinf(wanted) or math.isinf(ours):
        return ours == wanted
    rounding = ROUNDING.get(dtype, 0.0)
    # Below the normal range a dtype keeps fewer digits: a few of its smallest steps too.
    subnormal = 4 * np.finfo(dtype).smallest_subnormal if dtype in ROUNDING else 0.0
    return abs(ours - wanted) <= rounding * bound + rounding * abs(wanted) + subnormal


def check_against_reference(figure, values, reduction, is_abs, where):
    source = np.abs(values) if is_abs and values.dtype.kind != "b" else values
    with np.errstate(over="ignore"):  # a product may overflow even long double: inf is right
        wanted = reference(source, reduction)
    if isinstance(wanted, int):
        if -2**63 <= wanted < 2**63 or values.dtype.kind == "u" and 0 <= wanted < 2**64:
            assert int(figure) == wanted, where
        else:
            # Beyond 64 bits rulestream gives float64 of the exact figure, never a wrapped one.
            assert np.asarray(figure).dtype == np.float64, where
            # Within a rounding or two of the exact product (float() of an int is correctly
            # rounded; rulestream's product of doubles may be an ulp off).
            assert math.isclose(float(figure), float(wanted), rel_tol=1e-15), where
        return
    dtype = np.asarray(figure).dtype.name
    with np.errstate(over="ignore"):
        wanted = float(np.longdouble(wanted).astype(dtype))  # infinite where it is in the dtype
    assert close(float(figure), wanted, dtype, scale(source, reduction)), \
        (where, float(figure), float(wanted))


def deliberately_different(values, reduction, theirs, value_fingerprint):
    """True where FORMAT.md says rulestream reads what the writer meant instead."""
    if value_fingerprint.get("dtype") == "uint8" and values.dtype == np.int8:
        return True
    if reduction in ("l1", "l2") and values.ndim != 1:
        return True
    if values.dtype == np.float16 and reduction in ("std", "variance"):
        return True
    if values.dtype.kind in "iu" and reduction in ("sum", "prod"):
        return True  # checked exactly against Python's integers instead
    if "v" in theirs and isinstance(theirs["v"], str) and "Infinity" in theirs["v"]:
        return True  # numpy overflowed an intermediate; the reference says whether it should
    if values.dtype.kind == "f" and isinstance(theirs.get("v"), float) and theirs["v"] != 0 \
            and abs(theirs["v"]) < np.finfo(values.dtype).tiny:
        return True  # numpy's product lost digits below the normal range; rulestream's did not
    return False


def test_every_reduction(sample):
    name, path, expected = sample
    trial = create_trial(path)
    checked = 0
    for tname, tensor_expected in expected["tensors"].items():
        tensor = trial.tensor(tname)
        for entry in tensor_expected["per_step"]:
            step = entry["step"]
            for worker, wanted in entry["by_worker"].items():
                saved = set(wanted.get("saved_reductions") or [])
                fingerprint = wanted["value"]
                try:
                    values = tensor.value(step, worker=worker)
                except rulestream.TensorUnavailableForStep:
                    values = None
                for key, theirs in wanted["reductions"].items():
                    is_abs = key.startswith("abs_")
                    reduction = key[4:] if is_abs else key
                    where = "{} {} step {} {} {}".format(name, tname, step, worker, key)
                    try:
                        figure = tensor.reduction_value(step, reduction, worker=worker,
                                                        abs=is_abs)
                    except rulestream.RulestreamError as e:
                        figure, error = None, type(e).__name__
                    if key in saved:
                        assert figure is not None, where
                        assert np.asarray(figure).dtype.name == theirs["dtype"], where
                        assert type(figure).__name__ == theirs["pytype"], where
                        assert close(float(figure), number(theirs["v"]), "exact", 0), where
                    elif "error" in fingerprint and smdebug_lost_value(path, step, worker, tname):
                        # smdebug lost the value to its shape entry and raised; rulestream
                        # computes from the value it read.
                        assert figure is not None, where
                        check_against_reference(figure, values, reduction, is_abs, where)
                    elif values is None:
                        assert figure is None and error == theirs.get("error"), where
                    elif values.dtype.kind == "U":
                        assert figure is None and error == "ReductionUnsupported", where
                        assert theirs["error"] in SMDEBUG_ERRORS_FOR_STRINGS, where
                    elif deliberately_different(values, reduction, theirs, fingerprint):
                        assert figure is not None, where
                        check_against_reference(figure, values, reduction, is_abs, where)
                    else:
                        assert "error" not in theirs, (where, theirs, figure)
                        assert figure is not None, (where, error)
                        assert np.asarray(figure).dtype.name == theirs["dtype"], where
                        assert type(figure).__name__ == theirs["pytype"], where
                        assert close(float(figure), float(number(theirs["v"])),
                                     theirs["dtype"],
                                     scale(np.abs(values) if is_abs else values, reduction)), \
                            (where, float(figure), theirs["v"])
                    checked += 1
    assert checked > 0


def test_reduction_names_and_abs():
    # A hand-checked case: pt-dtypes' dt_int32 at its first step; smdebug's mean of an int32
    # tensor is a numpy.float64, its sum a numpy.int64, and abs=True reduces |x|.
    from conftest import trial_path
    trial = create_trial(trial_path("pt-dtypes"))
    tensor = trial.tensor("dt_int32")
    step = tensor.steps()[0]
    values = tensor.value(step)
    assert values.dtype == np.int32
    total = tensor.reduction_value(step, "sum")
    assert isinstance(total, np.int64) and int(total) == int(values.astype(np.int64).sum())
    mean = tensor.reduction_value(step, "mean")
    assert isinstance(mean, np.float64) and float(mean) == float(values.astype(np.float64).mean())
    assert int(tensor.reduction_value(step, "max", abs=True)) == int(np.abs(values).max())
