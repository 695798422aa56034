"""The drop-in's errors and option types, as the reference's (cufinufft v2.5.1) tests expect
(test_error_checks.py, test_basic.py::test_opts): the same exception types, with messages
that contain the reference's wording (ours may add detail after it); option values taken as
its option table (a ctypes struct) takes them. On the fake library (no GPU)."""

import numpy as np
import pytest
from _fake import FakeDeviceArray
from _support import warpfft

from warpfft import Plan


def _pts(dim, M=8, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-np.pi, np.pi, M).astype(dtype) for _ in range(dim)]


def test_setpts_x_must_be_a_vector(fake):
    """The reference checks x first: a (3, M) array for a 3D plan is "not a vector" (not
    "y is needed")."""
    plan = Plan(1, (16, 16, 16), eps=1e-3, dtype=np.complex64)
    with pytest.raises(TypeError, match="`x` must be a vector"):
        plan.setpts(np.stack(_pts(3)))


def test_setpts_y_and_z_must_be_of_the_shape_of_x(fake):
    x, y, z = [FakeDeviceArray(fake, p) for p in _pts(3)]
    plan = Plan(1, (16, 16, 16), eps=1e-3, dtype=np.complex64)
    with pytest.raises(TypeError, match="`y` must be of shape"):
        plan.setpts(x, FakeDeviceArray(fake, _pts(1, M=4)[0]), z)
    with pytest.raises(TypeError, match="`z` must be of shape"):
        plan.setpts(x, y, FakeDeviceArray(fake, _pts(1, M=4)[0]))


def test_setpts_too_many_coordinates(fake):
    x, y, z = [FakeDeviceArray(fake, p) for p in _pts(3)]
    with pytest.raises(TypeError, match="is 1, but `y` was specified"):
        Plan(1, (16,), eps=1e-3, dtype=np.complex64).setpts(x, y)
    with pytest.raises(TypeError, match="is 2, but `z` was specified"):
        Plan(1, (16, 16), eps=1e-3, dtype=np.complex64).setpts(x, y, z)
    assert "warpfft_setpts" not in fake.names()


def test_setpts_wrong_dtype_is_a_type_error(fake):
    right = [FakeDeviceArray(fake, p) for p in _pts(3)]
    wrong = [FakeDeviceArray(fake, p) for p in _pts(3, dtype=np.float64)]
    plan = Plan(1, (16, 16, 16), eps=1e-3, dtype=np.complex64)
    for i in range(3):
        args = list(right)
        args[i] = wrong[i]
        with pytest.raises(TypeError, match="does not have the correct dtype"):
            plan.setpts(*args)


def test_execute_wrong_dtype_is_a_type_error(fake):
    plan = Plan(1, (16, 16, 16), eps=1e-3, dtype=np.complex64)
    plan.setpts(*[FakeDeviceArray(fake, p) for p in _pts(3)])
    c = FakeDeviceArray(fake, np.ones(8, np.complex64))
    with pytest.raises(TypeError):
        plan.execute(c, FakeDeviceArray(fake, np.zeros((16, 16, 16), np.complex128)))
    with pytest.raises(TypeError):
        plan.execute(FakeDeviceArray(fake, np.ones(8, np.float32)))


def test_unknown_option(fake):
    with pytest.raises(TypeError, match="Invalid option 'foo'"):
        Plan(1, (8, 8), foo="bar")


@pytest.mark.parametrize("dtype", ["uint8", "float32", "float64", np.int64, "complex256"])
def test_plan_dtype_must_be_complex64_or_complex128(fake, dtype):
    with pytest.raises(TypeError, match="Expected complex64 or complex128"):
        Plan(1, (8, 8), dtype=dtype)


def test_type3_n_modes_is_the_dimension(fake):
    with pytest.raises(ValueError, match="must be a single number, the dimension"):
        Plan(3, (8, 8))


def test_execute_shape_errors(fake):
    plan = Plan(2, (6, 5), n_trans=2, dtype=np.complex128)
    plan.setpts(*_pts(2, dtype=np.float64))
    with pytest.raises(TypeError, match=r"Argument `data` must be of shape \(2, 6, 5\)"):
        plan.execute(np.zeros((6, 5), np.complex128))
    with pytest.raises(TypeError, match=r"Argument `out` must be of shape \(2, 8\)"):
        plan.execute(np.zeros((2, 6, 5), np.complex128), out=np.zeros((2, 9), np.complex128))


# ---- option values as the reference's option table (a ctypes struct) takes them ----

def test_bool_and_numpy_integer_options_are_taken(fake):
    """test_opts of the reference: Plan(..., gpu_sort=False, gpu_maxsubprobsize=10) -- once
    refused here with "gpu_sort must be an integer"."""
    Plan(1, (8, 8, 8), eps=1e-3, dtype=np.complex64, gpu_sort=False, gpu_maxsubprobsize=10)
    Plan(1, (8, 8), gpu_sort=True, gpu_kerevalmeth=np.int32(0), gpu_method=np.int64(1),
         modeord=False, gpu_spreadinterponly=np.bool_(False), debug=True,
         gpu_device_id=np.int16(0), gpu_binsizex=np.uint8(8), gpu_maxbatchsize=np.int64(4))
    create = [x for x in fake.calls if x[0] == "warpfft_plan_create"][-1]
    assert fake.last_opts["method"] == 1 and fake.last_opts["modeord"] == 0
    assert fake.last_opts["spreadinterponly"] == 0 and create[9] == 0  # device 0


def test_gpu_sort_takes_any_int_as_the_reference(fake):
    Plan(1, (8, 8), gpu_sort=2)  # nonzero: "sort" in the reference's C code
    Plan(1, (8, 8), gpu_sort=-1)


@pytest.mark.parametrize("value", [2, 2.0, np.float32(2.0), np.float64(1.25), 0, 1.5, 3,
                                   np.float64(3.0), np.int8(2)])
def test_upsampfac_takes_real_numbers(fake, value):
    """Any real number of [1.25, 3] (or 0, the reference's "auto") reaches the C library as
    given."""
    Plan(1, (8, 8), upsampfac=value)
    assert fake.last_opts["upsampfac"] == float(value)


@pytest.mark.parametrize("value", [1.2, 3.5, float("nan"), float("inf"), -2.0, True])
def test_upsampfac_outside_what_the_library_takes_raises_its_error(fake, value):
    """Outside 0 or [1.25, 3] the plan is refused as the reference refuses it (a RuntimeError:
    its makeplan fails), with the C library's message naming the option."""
    with pytest.raises(RuntimeError, match="upsampfac") as ei:
        Plan(1, (8, 8), upsampfac=value)
    assert isinstance(ei.value, warpfft.InvalidArgumentError)
    assert ei.value.name == "WARPFFT_ERR_INVALID_ARG"
    assert "must be 0 (chosen per plan) or in [1.25, 3]" in str(ei.value)


def test_a_refused_value_is_refused_after_an_equal_accepted_one(fake):
    """The options records are cached per items; 1.0 equals 1 as a key, but an integer option
    takes 1 and refuses 1.0, so a record made for gpu_sort=1 must not answer for 1.0 (the
    parametrized test below failed when test_option_table.py ran first in the process)."""
    Plan(1, (8, 8), gpu_sort=1).close()
    with pytest.raises(TypeError, match="gpu_sort"):
        Plan(1, (8, 8), gpu_sort=1.0)


@pytest.mark.parametrize("name, value", [
    ("gpu_sort", 1.0), ("gpu_sort", "1"), ("gpu_method", 0.5), ("modeord", None),
    ("gpu_device_id", None), ("upsampfac", "2.0"), ("upsampfac", None), ("upsampfac", 2j),
    ("gpu_maxsubprobsize", 2 ** 40), ("gpu_kerevalmeth", 2)])
def test_option_values_the_reference_refuses_raise_type_errors(fake, name, value):
    """What a ctypes int/double field refuses (floats, strings, None), and what it would wrap
    silently (2**40) or the reference refuses later (kerevalmeth 2): TypeError here, naming the
    keyword (a value that is no number) or its field (the option table's message)."""
    from warpfft import _options
    field = _options.spelled(name).replace("[", r"\[").replace("]", r"\]")
    with pytest.raises(TypeError, match=f"{name}|opts\\.{field} ="):
        Plan(1, (8, 8), **{name: value})


def test_opts_struct_reflects_the_options(fake):
    import ctypes

    plan = Plan(1, (8, 8), gpu_sort=False, upsampfac=1.25, gpu_method=2, gpu_stream=0)
    o = plan._opts
    assert type(o).__name__ == "NufftOpts" and ctypes.sizeof(o) == 88  # the C struct's size
    assert (o.gpu_sort, o.upsampfac, o.gpu_method) == (0, 1.25, 2)
    assert o.gpu_maxsubprobsize == 1024 and o.gpu_kerevalmeth == 1  # the reference's defaults
    assert o.gpu_stream is None


def test_simple_functions_take_the_same_option_types(fake):
    x, = _pts(1, dtype=np.float64)
    c = np.ones(8, np.complex128)
    out = warpfft.nufft1d1(x, c, (7,), gpu_sort=False, gpu_method=np.int64(1))
    assert out.shape == (7,)
