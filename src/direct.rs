//! Accuracy checks: exact transform values at sampled outputs of a [`Problem`]
//! (`warpfft_direct_sample`; the public entries are [`direct_sample`](crate::direct_sample) and
//! [`Plan::direct_sample`](crate::Plan::direct_sample)), and the relative l2 error the accuracy
//! contract is stated in.

use std::ffi::c_void;
use std::os::raw::c_int;

use num_complex::Complex;

use crate::device::DeviceBuffer;
use crate::error::{check, shape, Result};
use crate::sys;
use crate::types::{ModeOrder, Real, TransformType};

/// A direct-sum problem: everything `warpfft_direct_sample` needs except the arrays.
pub(crate) struct Problem {
    pub ty: TransformType,
    pub dim: usize,
    pub n_modes: [usize; 3],
    pub iflag: i32,
    pub modeord: ModeOrder,
    pub device: c_int,
    /// Number of points.
    pub m: usize,
    /// Outputs per transform (modes for type 1, points for type 2): the bound of `sample`.
    pub out_len: usize,
}

/// Checks the sample indices against `out_len` (outputs per transform) and converts them.
pub(crate) fn sample_indices(sample: &[usize], out_len: usize) -> Result<Vec<i64>> {
    sample
        .iter()
        .enumerate()
        .map(|(s, &i)| {
            if i < out_len {
                Ok(i as i64)
            } else {
                Err(shape(format!(
                    "direct_sample: sample[{s}] = {i} is out of range (the transform has \
                     {out_len} outputs)"
                )))
            }
        })
        .collect()
}

/// Calls `warpfft_direct_sample` for checked sample indices (from [`sample_indices`]).
///
/// # Safety
/// `xyz` (the first `dim`) must each point to `m` values of `T` on `device`; `input` to one
/// transform's input (`m` strengths for type 1, `N1·N2·N3` modes for type 2) of `Complex<T>`.
pub(crate) unsafe fn direct_sample_raw<T: Real>(
    p: &Problem,
    xyz: [u64; 3],
    input: u64,
    idx: &[i64],
) -> Result<Vec<Complex<f64>>> {
    let n_modes = p.n_modes.map(|n| n as i64);
    let (c, fk) = match p.ty {
        TransformType::Type1 => (input, 0),
        TransformType::Type2 => (0, input),
        TransformType::Type3 => {
            return Err(shape(
                "direct_sample: type 3 needs targets: use Plan::direct_sample on a type-3 plan",
            ))
        }
    };
    let ptr = |a: u64| a as *const c_void;
    let mut out = vec![Complex::<f64>::default(); idx.len()];
    // Complex<f64> is #[repr(C)] (re, im): `out` is the 2*n doubles the C call writes.
    check(sys::warpfft_direct_sample(
        p.ty.as_raw(),
        p.dim as c_int,
        n_modes.as_ptr(),
        p.iflag,
        p.modeord.as_raw(),
        T::PRECISION.as_raw(),
        p.device,
        p.m as i64,
        ptr(xyz[0]),
        ptr(xyz[1]),
        ptr(xyz[2]),
        ptr(c),
        ptr(fk),
        idx.len() as i64,
        idx.as_ptr(),
        out.as_mut_ptr().cast::<f64>(),
    ))?;
    Ok(out)
}

/// For [`direct_sample`](crate::direct_sample): checks the coordinate arrays (one per
/// dimension, equal lengths) and returns `M`.
pub(crate) fn point_count<T, S: AsRef<[T]>>(points: &[S], dim: usize) -> Result<usize> {
    if points.len() != dim {
        return Err(shape(format!(
            "direct_sample: {} coordinate arrays given, the problem is {dim}-dimensional",
            points.len()
        )));
    }
    let m = points.first().map_or(0, |x| x.as_ref().len());
    if points.iter().any(|x| x.as_ref().len() != m) {
        return Err(shape("direct_sample: coordinate arrays differ in length"));
    }
    Ok(m)
}

/// For [`direct_sample`](crate::direct_sample): checks `input` and `sample` against `p`,
/// uploads the points (one slice of `p.m` per dimension, from [`point_count`]) and the input to
/// `device`, and sums.
pub(crate) fn direct_sample_host<T: Real, S: AsRef<[T]>>(
    p: &Problem,
    device: usize,
    points: &[S],
    input: &[Complex<T>],
    sample: &[usize],
) -> Result<Vec<Complex<f64>>> {
    let m = p.m;
    let want = match p.ty {
        TransformType::Type1 | TransformType::Type3 => m,
        TransformType::Type2 => p.n_modes.iter().product(),
    };
    if input.len() != want {
        return Err(shape(format!(
            "direct_sample: input has {} elements, one transform's input has {want}",
            input.len()
        )));
    }
    let idx = sample_indices(sample, p.out_len)?;
    let bufs = points
        .iter()
        .map(|x| DeviceBuffer::from_slice_on(device, x.as_ref()))
        .collect::<Result<Vec<_>>>()?;
    let mut xyz = [0u64; 3];
    for (d, b) in bufs.iter().enumerate() {
        xyz[d] = b.as_raw();
    }
    let input = DeviceBuffer::from_slice_on(device, input)?;
    // SAFETY: the buffers were just uploaded with the checked lengths on `device`.
    unsafe { direct_sample_raw::<T>(p, xyz, input.as_raw(), &idx) }
}

/// Calls `warpfft_direct_sample3` for checked target indices.
///
/// # Safety
/// `xyz` (the first `dim`) must each point to `m` values of `T` on `device`, `stu` to `k`
/// values, `c` to `m` strengths of `Complex<T>`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn direct_sample3_raw<T: Real>(
    dim: usize,
    iflag: i32,
    device: c_int,
    m: usize,
    xyz: [u64; 3],
    c: u64,
    k: usize,
    stu: [u64; 3],
    idx: &[i64],
) -> Result<Vec<Complex<f64>>> {
    let ptr = |a: u64| a as *const c_void;
    let mut out = vec![Complex::<f64>::default(); idx.len()];
    check(sys::warpfft_direct_sample3(
        dim as c_int,
        iflag,
        T::PRECISION.as_raw(),
        device,
        m as i64,
        ptr(xyz[0]),
        ptr(xyz[1]),
        ptr(xyz[2]),
        ptr(c),
        k as i64,
        ptr(stu[0]),
        ptr(stu[1]),
        ptr(stu[2]),
        idx.len() as i64,
        idx.as_ptr(),
        out.as_mut_ptr().cast::<f64>(),
    ))?;
    Ok(out)
}

/// Relative l2 error `‖approx − exact‖₂ / ‖exact‖₂`, the measure of warpfft's accuracy
/// contract (≤ `tol`). Computed in double precision. Gives `0` when both are zero and infinity
/// when only `exact` is.
///
/// # Panics
/// When the slices differ in length.
pub fn relative_l2_error<T: Real>(approx: &[Complex<T>], exact: &[Complex<f64>]) -> f64 {
    assert_eq!(
        approx.len(),
        exact.len(),
        "relative_l2_error: slices differ in length"
    );
    let (mut num, mut den) = (0.0f64, 0.0f64);
    for (a, e) in approx.iter().zip(exact) {
        let a = Complex::new(a.re.to_f64(), a.im.to_f64());
        num += (a - e).norm_sqr();
        den += e.norm_sqr();
    }
    if den == 0.0 {
        if num == 0.0 {
            0.0
        } else {
            f64::INFINITY
        }
    } else {
        (num / den).sqrt()
    }
}
