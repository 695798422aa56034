//! Plans on streams other than the legacy default one: CU_STREAM_PER_THREAD through every
//! path, and a non-blocking stream that must still see fresh host uploads.

use std::ffi::{c_void, CStr};
use std::os::raw::{c_char, c_int, c_uint};

use crate::common::Rng;
use crate::{check_batch, run, Path, NTRANSF, PI, TOL_F32};
use warpfft::{Complex, Plan, TransformType};

#[test]
fn per_thread_default_stream() {
    require_gpu!();
    // CU_STREAM_PER_THREAD (0x2) is a valid stream handle without any CUDA bindings: it
    // exercises the plan's "custom stream" paths (waits in the device-buffer methods).
    let mut rng = Rng::from_state(17);
    let m = 1000;
    let coords: Vec<Vec<f32>> = rng.coords(2, m, PI);
    for ty in [TransformType::Type1, TransformType::Type2] {
        let n = 32 * 24;
        let input = rng.complex::<f32>(NTRANSF * if ty == TransformType::Type1 { m } else { n });
        for path in [Path::Host, Path::Device, Path::Raw] {
            let b = Plan::<f32>::builder(ty, &[32, 24])
                .tol(TOL_F32)
                .ntransf(NTRANSF);
            // SAFETY: CU_STREAM_PER_THREAD is valid for the process's lifetime.
            let b = unsafe { b.stream(2) };
            let (output, plan, _keep) = run(b, &coords, &input, path);
            assert_eq!(plan.stream(), 2);
            let err = check_batch(&plan, &input, &output, &mut rng);
            assert!(
                err <= TOL_F32,
                "{ty:?} {path:?} on stream 0x2: error {err:.3e}"
            );
        }
    }
}

/// A CUDA stream created with `CU_STREAM_NON_BLOCKING` through the driver (dlopen; the crate
/// has no CUDA bindings): nothing orders it after the legacy default stream, on which
/// synchronous uploads run.
struct NonBlockingStream {
    raw: u64,
    ctx: *mut c_void,
    dev: c_int,
    push: CuPush,
    pop: CuPop,
    destroy: CuDestroy,
    release: CuRelease,
}

type CuPush = unsafe extern "C" fn(*mut c_void) -> c_int;
type CuPop = unsafe extern "C" fn(*mut *mut c_void) -> c_int;
type CuDestroy = unsafe extern "C" fn(*mut c_void) -> c_int;
type CuRelease = unsafe extern "C" fn(c_int) -> c_int;
type CuGet = unsafe extern "C" fn(*mut c_int, c_int) -> c_int;
type CuRetain = unsafe extern "C" fn(*mut *mut c_void, c_int) -> c_int;
type CuCreate = unsafe extern "C" fn(*mut *mut c_void, c_uint) -> c_int;

extern "C" {
    fn dlopen(file: *const c_char, mode: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void;
}

impl NonBlockingStream {
    fn new() -> NonBlockingStream {
        use std::mem::transmute;
        // SAFETY: libcuda.so.1 is loaded (warpfft::init succeeded); each symbol is cast to its
        // documented driver API signature; the context is pushed around the stream creation.
        unsafe {
            let h = dlopen(c"libcuda.so.1".as_ptr(), 2 /* RTLD_NOW */);
            assert!(!h.is_null(), "dlopen libcuda.so.1");
            let sym = |name: &CStr| {
                let p = dlsym(h, name.as_ptr());
                assert!(!p.is_null(), "libcuda.so.1 has no {name:?}");
                p
            };
            let get = transmute::<*mut c_void, CuGet>(sym(c"cuDeviceGet"));
            let retain = transmute::<*mut c_void, CuRetain>(sym(c"cuDevicePrimaryCtxRetain"));
            let create = transmute::<*mut c_void, CuCreate>(sym(c"cuStreamCreate"));
            let mut s = NonBlockingStream {
                raw: 0,
                ctx: std::ptr::null_mut(),
                dev: 0,
                push: transmute::<*mut c_void, CuPush>(sym(c"cuCtxPushCurrent_v2")),
                pop: transmute::<*mut c_void, CuPop>(sym(c"cuCtxPopCurrent_v2")),
                destroy: transmute::<*mut c_void, CuDestroy>(sym(c"cuStreamDestroy_v2")),
                release: transmute::<*mut c_void, CuRelease>(sym(c"cuDevicePrimaryCtxRelease_v2")),
            };
            assert_eq!(get(&mut s.dev, 0), 0, "cuDeviceGet");
            assert_eq!(retain(&mut s.ctx, s.dev), 0, "cuDevicePrimaryCtxRetain");
            assert_eq!((s.push)(s.ctx), 0, "cuCtxPushCurrent");
            let mut stream = std::ptr::null_mut();
            let r = create(&mut stream, 1 /* CU_STREAM_NON_BLOCKING */);
            (s.pop)(&mut std::ptr::null_mut());
            assert_eq!(r, 0, "cuStreamCreate(NON_BLOCKING)");
            s.raw = stream as u64;
            s
        }
    }
}

impl Drop for NonBlockingStream {
    fn drop(&mut self) {
        // SAFETY: the stream and the retained context were created in new().
        unsafe {
            (self.push)(self.ctx);
            (self.destroy)(self.raw as *mut c_void);
            (self.pop)(&mut std::ptr::null_mut());
            (self.release)(self.dev);
        }
    }
}

/// Host uploads are ordered before the plan's work on a non-blocking stream: set_points
/// replaces a point set in the same device buffers (all points at 0, then random ones) and
/// execute stages its input over the previous input (zeros, then random values). Stale data
/// (a synchronous copy still landing on the legacy stream while the plan's kernels run) would
/// make the outputs those of the old points or inputs. Type 2 checks the last 4096 points (the
/// tail of the upload lands last) and a spread sample; type 1 every mode against the exact sum.
#[test]
fn non_blocking_stream_sees_fresh_uploads() {
    require_gpu!();
    let stream = NonBlockingStream::new();
    let mut rng = Rng::from_state(23);
    let m = 1 << 22;
    let zeros = vec![0.0f64; m];
    let x: Vec<f64> = rng.points(m, PI);
    // type 2: c[j] depends on x[j] only
    let n = 48;
    // SAFETY: the stream outlives the plan (declared first, dropped last).
    let mut plan = unsafe { Plan::<f64>::type2(&[n]).tol(1e-9).stream(stream.raw) }
        .build()
        .unwrap();
    let fk = rng.complex::<f64>(n);
    let mut c = vec![Complex::default(); m];
    let sample: Vec<usize> = (m - 4096..m).chain((0..m).step_by(4099)).collect();
    for round in 0..4 {
        plan.set_points(&[&zeros]).unwrap();
        plan.execute(&fk, &mut c).unwrap();
        plan.set_points(&[&x]).unwrap();
        plan.execute(&fk, &mut c).unwrap();
        let exact = plan.direct_sample(&fk, &sample).unwrap();
        let approx: Vec<Complex<f64>> = sample.iter().map(|&j| c[j]).collect();
        let err = warpfft::relative_l2_error(&approx, &exact);
        assert!(
            err <= 1e-9,
            "type 2 round {round}: error {err:.3e} (stale points?)"
        );
    }
    // type 1: every mode depends on every strength
    let mut plan = unsafe { Plan::<f64>::type1(&[n]).tol(1e-9).stream(stream.raw) }
        .build()
        .unwrap();
    let c_zero = vec![Complex::default(); m];
    let c_new = rng.complex::<f64>(m);
    let mut out = vec![Complex::default(); n];
    let all: Vec<usize> = (0..n).collect();
    for round in 0..4 {
        plan.set_points(&[&zeros]).unwrap();
        plan.set_points(&[&x]).unwrap();
        plan.execute(&c_zero, &mut out).unwrap();
        plan.execute(&c_new, &mut out).unwrap();
        let exact = plan.direct_sample(&c_new, &all).unwrap();
        let err = warpfft::relative_l2_error(&out, &exact);
        assert!(
            err <= 1e-9,
            "type 1 round {round}: error {err:.3e} (stale input?)"
        );
    }
}
