//! The kernels, in the mode the features select, into `OUT_DIR/kernels.rs` (src/lib.rs).
fn main() {
    let mode = fatbuild::Mode::from_cargo_features().unwrap_or_else(|e| panic!("{e}"));
    fatbuild::Build::new()
        .mode(mode)
        .archs_from_env("RUST_KERNELS_CUDA_ARCHS")
        .include("kernels")
        .module(
            fatbuild::Module::new("saxpy")
                .source("kernels/saxpy.cu")
                .kernel("saxpy"),
        )
        .module(
            fatbuild::Module::new("reduce")
                .source("kernels/reduce.cu")
                .kernel("reduce_sum"),
        )
        .embed("kernels")
        .unwrap_or_else(|e| panic!("{e}"));
}
