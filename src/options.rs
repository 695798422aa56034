//! The option table of the C core ([`options`]) and the one way the Rust API sets options: by
//! name, through it (`warpfft_opts_set`).
//!
//! Every plan option — each field of `warpfft_opts`, and each option of the reference
//! (cuFINUFFT) that warpfft accepts without effect — is one row of a table the C core owns
//! (`c_core/src/params/options.c`): its name, type, default, bounds, the reference's spellings
//! and a line of doc. [`PlanBuilder`](crate::PlanBuilder) and
//! [`ToeplitzBuilder`](crate::ToeplitzBuilder) keep a `warpfft_opts` record and set it through
//! the table, so no default or bound is written in Rust, and a bad value fails with the same
//! message as in C, Python, JAX and PyTorch:
//!
//! ```
//! use warpfft::{options, Plan};
//!
//! let row = options().into_iter().find(|o| o.name == "upsampfac").unwrap();
//! assert!(row.aliases.contains(&"gpu_upsampfac"));
//! let err = Plan::<f64>::type1(&[32]).option("upsampfac", 1.2).params().unwrap_err();
//! assert_eq!(
//!     err.message(),
//!     "opts.upsampfac = 1.2; must be 0 (chosen per plan) or in [1.25, 3]"
//! );
//! ```

use std::ffi::{CStr, CString};
use std::fmt;
use std::os::raw::c_char;

use crate::error::{check, Error, Result};
use crate::sys;

/// What values an option takes (its row's type, default and bounds).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OptionBounds {
    /// An integer field (`int32_t` or `int64_t`).
    Int {
        /// warpfft's default.
        default: i64,
        /// The smallest value taken.
        min: i64,
        /// The largest value taken.
        max: i64,
        /// The reference's default where it has the option (e.g. `gpu_maxsubprobsize` 1024,
        /// where warpfft's 0 chooses per plan), else `default`.
        reference_default: i64,
    },
    /// A `uint64_t` field (the stream): any value, default 0.
    Uint,
    /// A `double` field.
    Float {
        /// warpfft's default.
        default: f64,
        /// The smallest value taken (besides 0 when `zero_auto`).
        min: f64,
        /// The largest value taken.
        max: f64,
        /// 0 is taken too: chosen per plan.
        zero_auto: bool,
        /// The reference's default where it has the option, else `default`.
        reference_default: f64,
    },
}

/// One row of the option table (`warpfft_opt_describe`).
#[derive(Debug, Clone, PartialEq)]
pub struct OptionInfo {
    /// The field's C name: `"upsampfac"`, `"bin_size[0]"`, ...; what [`PlanBuilder::option`]
    /// takes (as it takes the aliases).
    ///
    /// [`PlanBuilder::option`]: crate::PlanBuilder::option
    pub name: &'static str,
    /// The reference's spellings (cuFINUFFT's opts fields, e.g. `"gpu_binsizex"`; jax-finufft's
    /// `"gpu_upsampfac"`); empty for warpfft's own options.
    pub aliases: Vec<&'static str>,
    /// An enumeration's value names from its minimum up (`["AUTO", "GM", "SM", "OD"]`).
    pub values: Vec<&'static str>,
    /// One line of doc.
    pub doc: &'static str,
    /// Its type, default and bounds.
    pub bounds: OptionBounds,
    /// The reference's option that warpfft accepts, checks and ignores (no field here).
    pub no_effect: bool,
    offset: i32,
    ty: i32,
}

/// A C string of the table (static in the library).
fn static_str(p: *const c_char) -> &'static str {
    if p.is_null() {
        return "";
    }
    // SAFETY: the table's strings are NUL-terminated, static and ASCII (options.c).
    unsafe { CStr::from_ptr(p) }.to_str().unwrap_or("")
}

fn words(p: *const c_char) -> Vec<&'static str> {
    static_str(p).split(' ').filter(|w| !w.is_empty()).collect()
}

/// Row `i` of the table.
fn describe(i: usize) -> Result<OptionInfo> {
    let mut d = std::mem::MaybeUninit::<sys::warpfft_opt_desc>::zeroed();
    // SAFETY: zeroed plain data; struct_size is set before the call reads it.
    let d = unsafe {
        (*d.as_mut_ptr()).struct_size = std::mem::size_of::<sys::warpfft_opt_desc>() as u32;
        check(sys::warpfft_opt_describe(i, d.as_mut_ptr()))?;
        d.assume_init()
    };
    let bounds = match d.type_ as u32 {
        sys::WARPFFT_OPT_FLOAT64 => OptionBounds::Float {
            default: d.float_default,
            min: d.float_min,
            max: d.float_max,
            zero_auto: d.flags & sys::WARPFFT_OPT_FLAG_ZERO_AUTO != 0,
            reference_default: d.float_ref_default,
        },
        sys::WARPFFT_OPT_UINT64 => OptionBounds::Uint,
        _ => OptionBounds::Int {
            default: d.int_default,
            min: d.int_min,
            max: d.int_max,
            reference_default: d.int_ref_default,
        },
    };
    Ok(OptionInfo {
        name: static_str(d.name),
        aliases: words(d.aliases),
        values: words(d.values),
        doc: static_str(d.doc),
        bounds,
        no_effect: d.flags & sys::WARPFFT_OPT_FLAG_NO_EFFECT != 0,
        offset: d.offset,
        ty: d.type_,
    })
}

/// The option table, row by row (no GPU needed): every option a plan or Toeplitz operator
/// takes, with its type, default, bounds, the reference's spellings and a line of doc.
pub fn options() -> Vec<OptionInfo> {
    // SAFETY: no arguments; never fails.
    let n = unsafe { sys::warpfft_opt_count() };
    (0..n).filter_map(|i| describe(i).ok()).collect()
}

/// A `warpfft_opts` record set through the table by name, keeping the first failure for the
/// builder's `params`/`build` to report (the builders' setters cannot fail).
#[derive(Clone)]
pub(crate) struct Record {
    raw: sys::warpfft_opts,
    err: Option<Error>,
}

impl Record {
    /// The table's defaults (`warpfft_opts_default`).
    pub(crate) fn new() -> Self {
        let mut raw = std::mem::MaybeUninit::<sys::warpfft_opts>::zeroed();
        // SAFETY: `raw` is a valid out-pointer to plain data; zeroed if the call failed.
        let err = check(unsafe { sys::warpfft_opts_default(raw.as_mut_ptr()) }).err();
        Record {
            // SAFETY: zero-initialised plain data (filled on success).
            raw: unsafe { raw.assume_init() },
            err,
        }
    }

    /// Sets option `name` (a table name or alias) to `value` (its text: an integer, or any
    /// number for a float option), checked by the C core; a failure is kept (the first one)
    /// and leaves the record as it was.
    pub(crate) fn set(&mut self, name: &str, value: impl fmt::Display) {
        if self.err.is_some() {
            return;
        }
        let (Ok(n), Ok(v)) = (CString::new(name), CString::new(value.to_string())) else {
            self.err = Some(Error::InvalidArg(format!(
                "option {name:?}: names and values have no NUL byte"
            )));
            return;
        };
        // SAFETY: the record is a valid warpfft_opts from warpfft_opts_default; the strings are
        // NUL-terminated and outlive the call.
        self.err =
            check(unsafe { sys::warpfft_opts_set(&mut self.raw, n.as_ptr(), v.as_ptr()) }).err();
    }

    /// The record, or the first failure of a setting.
    pub(crate) fn get(&self) -> Result<sys::warpfft_opts> {
        match &self.err {
            Some(e) => Err(e.clone()),
            None => Ok(self.raw),
        }
    }

    /// The fields as they stand (read by the builders' accessors).
    pub(crate) fn raw(&self) -> &sys::warpfft_opts {
        &self.raw
    }
}

/// Every field of the record with its name from the table, e.g. `modeord: 0, method: 2, ...`.
impl fmt::Debug for Record {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut m = f.debug_map();
        let base = &self.raw as *const sys::warpfft_opts as *const u8;
        for o in options().iter().filter(|o| o.offset >= 0) {
            // SAFETY: the table's offsets and types lie inside warpfft_opts (checked by
            // c_core/tests/test_params_table.c); unaligned reads of plain data.
            unsafe {
                let at = base.add(o.offset as usize);
                match o.ty as u32 {
                    sys::WARPFFT_OPT_INT32 => {
                        m.entry(&o.name, &(at as *const i32).read_unaligned())
                    }
                    sys::WARPFFT_OPT_INT64 => {
                        m.entry(&o.name, &(at as *const i64).read_unaligned())
                    }
                    sys::WARPFFT_OPT_UINT64 => {
                        m.entry(&o.name, &(at as *const u64).read_unaligned())
                    }
                    _ => m.entry(&o.name, &(at as *const f64).read_unaligned()),
                };
            }
        }
        if let Some(e) = &self.err {
            m.entry(&"error", &e.message());
        }
        m.finish()
    }
}
