//! fatbuild's example crate: two CUDA C kernels (`kernels/saxpy.cu`, `kernels/reduce.cu`),
//! built by `build.rs` in the mode the features select (`jit`, `aot`, `nvrtc`), embedded as
//! the generated module [`kernels`], and launched through `fatbuild_rt`.
//!
//! ```no_run
//! let ctx = fatbuild_rt::Context::new(0)?;
//! let k = rust_kernels::Kernels::load(&ctx)?;
//! let x = ctx.upload(&[1.0f32, 2.0, 3.0])?;
//! let mut y = ctx.upload(&[1.0f32; 3])?;
//! k.saxpy(2.0, &x, &mut y)?; // y = 2 x + y
//! assert_eq!(y.to_vec()?, [3.0, 5.0, 7.0]);
//! assert_eq!(k.sum(&x)?, 6.0);
//! # Ok::<(), fatbuild_rt::Error>(())
//! ```

use fatbuild_rt::{Args, Context, DeviceBuffer, Error, Function, LaunchConfig};
use fatbuild_rt::{LoadReport, Result};

/// What build.rs embedded: `SAXPY`, `REDUCE`, `MODULES`, `EMBED` (fatbuild's generated module).
pub mod kernels {
    include!(concat!(env!("OUT_DIR"), "/kernels.rs"));
}

/// Threads per block; `RK_BLOCK` in `kernels/common.cuh` (the reduction relies on it).
pub const BLOCK: u32 = 256;

/// Blocks of the reduction's first pass (each sums a grid-stride slice); one block then sums
/// their partial sums.
const REDUCE_BLOCKS: usize = 1024;

/// Both kernels, loaded on one GPU.
pub struct Kernels {
    ctx: Context,
    saxpy: Function,
    reduce: Function,
    /// How each module was loaded: `[saxpy, reduce]`.
    pub reports: [LoadReport; 2],
}

impl Kernels {
    /// Loads both modules on `ctx`'s GPU (the first image that fits: fatbin, PTX, NVRTC).
    pub fn load(ctx: &Context) -> Result<Kernels> {
        let s = ctx.load(&kernels::SAXPY)?;
        let r = ctx.load(&kernels::REDUCE)?;
        Ok(Kernels {
            ctx: ctx.clone(),
            saxpy: s.function("saxpy")?,
            reduce: r.function("reduce_sum")?,
            reports: [s.report().clone(), r.report().clone()],
        })
    }

    /// `y = a * x + y` (asynchronous: read `y` back, or synchronize, to wait).
    pub fn saxpy(&self, a: f32, x: &DeviceBuffer<f32>, y: &mut DeviceBuffer<f32>) -> Result<()> {
        let n = count(x.len(), y.len())?;
        let args = Args::new()
            .arg(a)
            .arg(x.device_ptr())
            .arg(y.device_ptr())
            .arg(n);
        // SAFETY: saxpy(float, const float *, float *, int) with x and y of n floats; the
        // grid covers n threads and each touches only its own index below n.
        unsafe {
            self.saxpy
                .launch(&LaunchConfig::for_elements(n as usize, BLOCK), &args)
        }
    }

    /// The sum of `x` (two launches of `reduce_sum`, then one float read back).
    pub fn sum(&self, x: &DeviceBuffer<f32>) -> Result<f32> {
        let n = count(x.len(), x.len())?;
        let per_block = BLOCK as usize;
        let blocks = REDUCE_BLOCKS.min(((n as usize + per_block - 1) / per_block).max(1));
        let partial = self.ctx.alloc::<f32>(blocks)?;
        let total = self.ctx.alloc::<f32>(1)?;
        let cfg = |blocks: usize| LaunchConfig {
            grid: (blocks as u32, 1, 1),
            block: (BLOCK, 1, 1),
            shared_bytes: 0,
        };
        let a1 = Args::new()
            .arg(x.device_ptr())
            .arg(partial.device_ptr())
            .arg(n);
        let a2 = Args::new()
            .arg(partial.device_ptr())
            .arg(total.device_ptr())
            .arg(blocks as i32);
        // SAFETY: reduce_sum(const float *, float *, int) with BLOCK threads per block (its
        // shared array's size): the first pass reads n floats of x and writes one float per
        // block into `partial` (`blocks` long); the second reads those and writes `total`.
        unsafe {
            self.reduce.launch(&cfg(blocks), &a1)?;
            self.reduce.launch(&cfg(1), &a2)?;
        }
        Ok(total.to_vec()?[0])
    }
}

/// The element count as the kernels' `int`, checking both buffers have it.
fn count(a: usize, b: usize) -> Result<i32> {
    if a != b {
        return Err(Error::invalid_argument(format!(
            "x has {a} elements and y {b}; saxpy needs them equal"
        )));
    }
    i32::try_from(a).map_err(|_| {
        Error::invalid_argument(format!("{a} elements: the kernels index with a 32-bit int"))
    })
}

/// The embedded bytes per module (images, then the shared sources), for `--sizes`.
pub fn embedded_sizes() -> Vec<(String, usize)> {
    let mut v: Vec<(String, usize)> = kernels::MODULES
        .iter()
        .map(|m| {
            let b: usize = m.images().iter().map(|i| i.bytes().len()).sum();
            (m.name().to_string(), b)
        })
        .collect();
    let src: usize = kernels::EMBED.files().iter().map(|f| f.bytes().len()).sum();
    v.push(("sources".into(), src));
    v
}
