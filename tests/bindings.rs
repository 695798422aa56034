//! The committed bindings (src/sys/bindings.rs) are what bindgen makes of warpfft.h today.
//! Run with `cargo test --features bindgen --test bindings` (needs libclang).

#[cfg(feature = "bindgen")]
#[test]
fn committed_bindings_match_bindgen() {
    assert!(
        warpfft::sys::COMMITTED_BINDINGS == warpfft::sys::GENERATED_BINDINGS,
        "src/sys/bindings.rs is stale: copy $OUT_DIR/bindings.rs of a `--features bindgen` build \
         over it (warpfft.h changed without regenerating)"
    );
}

#[cfg(not(feature = "bindgen"))]
#[test]
fn committed_bindings_match_bindgen() {
    eprintln!("skipped: bindings check needs `--features bindgen`");
}
