//! The C core's option table through the Rust builders, without a GPU: every row and alias
//! against C's setter (python/tests/test_option_table.py walks the other interfaces), and the
//! Toeplitz operator's one default upsampling factor.

use warpfft::{Error, Plan};

/// The C core's setter on a default record: (status, record, message).
fn c_set(name: &str, value: &str) -> (i32, warpfft::sys::warpfft_opts, String) {
    use std::ffi::{CStr, CString};
    let mut o = std::mem::MaybeUninit::<warpfft::sys::warpfft_opts>::zeroed();
    let (n, v) = (CString::new(name).unwrap(), CString::new(value).unwrap());
    // SAFETY: a default record, NUL-terminated strings; the message is copied at once.
    unsafe {
        assert_eq!(warpfft::sys::warpfft_opts_default(o.as_mut_ptr()), 0);
        let st = warpfft::sys::warpfft_opts_set(o.as_mut_ptr(), n.as_ptr(), v.as_ptr()) as i32;
        let msg = CStr::from_ptr(warpfft::sys::warpfft_last_error());
        (st, o.assume_init(), msg.to_string_lossy().into_owned())
    }
}

fn opts_bytes(o: &warpfft::sys::warpfft_opts) -> Vec<u8> {
    let size = std::mem::size_of::<warpfft::sys::warpfft_opts>();
    // SAFETY: plain data of `size` bytes (padding zeroed by warpfft_opts_default).
    unsafe { std::slice::from_raw_parts(o as *const _ as *const u8, size).to_vec() }
}

/// Every row of the C core's option table through the builder's `option` (and every alias):
/// a valid value (the row's ends and default) lands in the record exactly as C's setter puts
/// it, and params() accepts it; an invalid one (past the ends, past the field's type, not a
/// number) fails params() with C's message for it. python/tests/test_option_table.py walks the
/// same table through Python, JAX and PyTorch.
#[test]
fn option_table_through_the_builder() {
    use warpfft::OptionBounds;
    let rows = warpfft::options();
    assert!(rows.len() >= 13 && rows.iter().any(|o| o.name == "deterministic"));
    for o in &rows {
        let (good, bad): (Vec<String>, Vec<String>) = match o.bounds {
            OptionBounds::Int {
                default, min, max, ..
            } => {
                let mut bad: Vec<String> = vec!["1.5".into(), "x".into()];
                let (tmin, tmax) = if max <= i64::from(i32::MAX) {
                    (i64::from(i32::MIN), i64::from(i32::MAX))
                } else {
                    (i64::MIN, i64::MAX)
                };
                bad.push(if min > tmin { min - 1 } else { max }.to_string());
                if max < tmax {
                    bad.push((max + 1).to_string());
                }
                bad.push(format!("{}0", tmax)); // past the field's type
                let good = [min, max, default].iter().map(|v| v.to_string()).collect();
                (good, bad)
            }
            OptionBounds::Uint => (
                vec!["0".into(), u64::MAX.to_string()],
                vec!["-1".into(), "18446744073709551616".into()],
            ),
            OptionBounds::Float {
                default, min, max, ..
            } => (
                vec![min.to_string(), max.to_string(), default.to_string()],
                vec![
                    (min * (1.0 - 1e-9)).to_string(),
                    (max * (1.0 + 1e-9)).to_string(),
                    "NaN".into(),
                ],
            ),
        };
        let bad: Vec<String> = bad
            .into_iter()
            .filter(|v| c_set(o.name, v).0 != 0)
            .collect();
        for v in &good {
            let b = Plan::<f64>::type1(&[64, 64]).tol(1e-3).option(o.name, v);
            let (st, want, msg) = c_set(o.name, v);
            assert_eq!(st, 0, "{} = {v}: {msg}", o.name);
            assert_eq!(
                opts_bytes(&b.raw_opts().unwrap()),
                opts_bytes(&want),
                "{} = {v}",
                o.name
            );
            b.params()
                .unwrap_or_else(|e| panic!("{} = {v} refused by params: {e}", o.name));
        }
        assert!(!bad.is_empty(), "{}: no invalid value tried", o.name);
        for v in &bad {
            let (_, _, msg) = c_set(o.name, v);
            for spelling in std::iter::once(&o.name).chain(o.aliases.iter()) {
                let e = Plan::<f64>::type1(&[64, 64])
                    .option(spelling, v)
                    .params()
                    .unwrap_err();
                assert!(matches!(e, Error::InvalidArg(_)), "{spelling} = {v}: {e:?}");
                assert_eq!(e.message(), msg, "{spelling} = {v}");
            }
        }
    }
    // the typed setters go through the same rows
    let e = Plan::<f32>::type1(&[16])
        .upsampfac(1.2)
        .params()
        .unwrap_err();
    assert_eq!(
        e.message(),
        "opts.upsampfac = 1.2; must be 0 (chosen per plan) or in [1.25, 3]"
    );
    let e = Plan::<f32>::type1(&[16])
        .device(1 << 40)
        .params()
        .unwrap_err();
    assert_eq!(e.message(), c_set("device", &(1u64 << 40).to_string()).2);
    let e = Plan::<f32>::type1(&[16])
        .option("no_such", 1)
        .params()
        .unwrap_err();
    assert!(e.message().contains("unknown option \"no_such\""), "{e}");
}

/// One default upsampling factor for the Toeplitz operator everywhere: the table's 0 (chosen per
/// plan, with the kernel width), as the C core takes with NULL options and warpfft.Toeplitz in
/// Python; the builder used to set 2.0.
#[test]
fn toeplitz_upsampfac_default_is_the_tables() {
    use warpfft::{sys, Toeplitz, Weights};
    let n = [256i64, 256, 1];
    let rust = Toeplitz::<f32>::builder(&[256, 256])
        .tol(1e-5)
        .params(Weights::None)
        .unwrap();
    let mut c = std::mem::MaybeUninit::<sys::warpfft_toeplitz_info>::zeroed();
    // SAFETY: valid pointers; NULL options are the defaults.
    let st = unsafe {
        sys::warpfft_toeplitz_params(
            2,
            n.as_ptr(),
            1,
            1e-5,
            sys::WARPFFT_F32,
            std::ptr::null(),
            sys::WARPFFT_WEIGHTS_NONE as i32,
            c.as_mut_ptr(),
        )
    };
    assert_eq!(st, 0);
    // SAFETY: filled on success.
    let c = unsafe { c.assume_init() };
    assert_eq!(rust.kernel_upsampfac, c.kernel_upsampfac);
    assert_ne!(c.kernel_upsampfac, 2.0, "this case must tell 0 from 2.0");
}
