//! The kernels, in the mode the features select, into `OUT_DIR/kernels.rs` (src/lib.rs).
use fatbuild::{Build, Mode, Module};

fn main() {
    let mode = Mode::from_cargo_features().unwrap_or_else(|e| panic!("{e}"));
    let saxpy = Module::new("saxpy").source("kernels/saxpy.cu");
    let reduce = Module::new("reduce").source("kernels/reduce.cu");
    Build::new()
        .mode(mode)
        .archs_from_env("RUST_KERNELS_CUDA_ARCHS")
        .include("kernels")
        .module(saxpy.kernel("saxpy"))
        .module(reduce.kernel("reduce_sum"))
        .embed("kernels")
        .unwrap_or_else(|e| panic!("{e}"));
}
