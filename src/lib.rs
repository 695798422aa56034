//! warpfft — GPU non-uniform FFTs (placeholder; the safe API lands in src/plan.rs etc.)
#[cfg(not(any(feature = "jit", feature = "aot")))]
compile_error!(
    "warpfft needs at least one of the features `jit` (embed PTX, JIT-compiled by the driver) \
     or `aot` (embed SASS for WARPFFT_CUDA_ARCHS); enable one, e.g. `default-features = false, \
     features = [\"aot\"]`"
);

pub mod sys;
