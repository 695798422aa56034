//! The loading order and the wrong-arch error, decided from what the build recorded (no GPU).

use super::*;
use crate::driver::CUDA_ERROR_OUT_OF_MEMORY;
use crate::embedded::__private::v1::{image, module, ptx, sass, FATBIN, PTX};
use crate::embedded::{FatbinEntry, Image, SourceFile};

static FAT_80_90: [FatbinEntry; 2] = [sass(80), sass(90)];
static FAT_80_90_PTX: [FatbinEntry; 3] = [sass(80), sass(90), ptx(75)];
static NO_FILES: [SourceFile; 0] = [];

/// A module of kernel `k` that CUDA 13 built into `images`, without sources.
const fn built(name: &'static str, images: &'static [Image]) -> Module {
    module(name, images, &["k"], &[], &[], &NO_FILES, "", 13000)
}

static AOT: Module = built(
    "aot_only",
    &[image(FATBIN, "fatbin", b"fatbin bytes", &FAT_80_90)],
);
static AOT_JIT: Module = built(
    "aot_jit",
    &[image(FATBIN, "fatbin", b"fatbin bytes", &FAT_80_90_PTX)],
);
static AOT_PTX_NVRTC: Module = module(
    "all",
    &[
        image(FATBIN, "fatbin", b"fatbin bytes", &FAT_80_90),
        image(PTX, "a", b".version 9.0\n\0", &[]),
        image(PTX, "b", b".version 9.0\n\0", &[]),
    ],
    &["k"],
    &["a.cu", "b.cu"],
    &["-DX=1"],
    &NO_FILES,
    "d",
    13000,
);
static NOTHING: Module = module("nothing", &[], &[], &[], &[], &NO_FILES, "", 0);

fn kinds(steps: &[Step]) -> Vec<&'static str> {
    steps
        .iter()
        .map(|s| match s {
            Step::Fatbin(_) => "fatbin",
            Step::Ptx(_) => "ptx",
            Step::PtxLink => "link",
            Step::Nvrtc => "nvrtc",
        })
        .collect()
}

#[test]
fn sass_is_used_only_where_it_runs() {
    let mut skipped = Vec::new();
    assert_eq!(kinds(&plan(&AOT, 90, &mut skipped)), ["fatbin"]);
    assert_eq!(
        kinds(&plan(&AOT, 86, &mut skipped)),
        ["fatbin"],
        "sm_80 SASS runs on sm_86"
    );
    assert!(skipped.is_empty());
    // sm_75 is older than both, sm_100 is another major: nothing in the fatbin runs.
    for sm in [75, 100, 120] {
        let mut skipped = Vec::new();
        assert!(plan(&AOT, sm, &mut skipped).is_empty(), "sm_{sm}");
        assert_eq!(skipped.len(), 1);
        assert!(
            skipped[0].contains(&format!("nothing in it runs on sm_{sm}")),
            "{skipped:?}"
        );
    }
    // With PTX inside, any newer GPU JITs it.
    assert_eq!(kinds(&plan(&AOT_JIT, 120, &mut Vec::new())), ["fatbin"]);
}

#[test]
fn the_fallbacks_come_in_order() {
    let mut skipped = Vec::new();
    assert_eq!(
        kinds(&plan(&AOT_PTX_NVRTC, 90, &mut skipped)),
        ["fatbin", "link", "nvrtc"]
    );
    assert_eq!(
        kinds(&plan(&AOT_PTX_NVRTC, 75, &mut skipped)),
        ["link", "nvrtc"]
    );
    assert!(plan(&NOTHING, 90, &mut skipped).is_empty());
}

#[test]
fn the_wrong_arch_error_says_what_is_embedded_and_the_fix() {
    let mut skipped = Vec::new();
    assert!(plan(&AOT, 75, &mut skipped).is_empty());
    let e = no_image_for(&AOT, 75, "Tesla T4", &skipped, None);
    assert_eq!(e.kind(), ErrorKind::NoImageForGpu);
    assert_eq!(e.code(), Some(CUDA_ERROR_NO_BINARY_FOR_GPU));
    let m = e.message();
    for want in [
        "module `aot_only` has no image for this GPU (Tesla T4, sm_75)",
        "a fatbin (SASS sm_80, SASS sm_90)",
        "nothing in it runs on sm_75",
        "`75` in it",
        "`jit` feature",
        "`nvrtc`",
    ] {
        assert!(m.contains(want), "{want:?} not in: {m}");
    }
    let e = no_image_for(&NOTHING, 90, "H100", &[], None);
    assert!(
        e.message().contains("the build embedded nothing"),
        "{}",
        e.message()
    );
}

#[test]
fn only_image_mismatches_move_on_to_the_next_image() {
    let code = |c| Error::with_code(ErrorKind::Driver, c, "x");
    assert!(may_try_next(&code(CUDA_ERROR_NO_BINARY_FOR_GPU)));
    assert!(may_try_next(&code(CUDA_ERROR_INVALID_PTX)));
    assert!(may_try_next(&Error::new(ErrorKind::NoNvrtc, "x")));
    assert!(!may_try_next(&code(CUDA_ERROR_OUT_OF_MEMORY)));
    assert!(!may_try_next(&Error::new(ErrorKind::Compile, "x")));
}
