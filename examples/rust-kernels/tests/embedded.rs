//! What build.rs embedded for this build's features, read through the generated module (no
//! GPU needed): the mode, each module's images, kernels, sources and options. With
//! `RUST_KERNELS_EXPECT_ARCHS` set at test time (CI: "80;90"), the fatbins must hold SASS for
//! exactly those archs. `just rust-kernels` runs it in the jit, aot, nvrtc and aot+jit+nvrtc
//! builds.

use fatbuild_rt::{FatbinEntry, ImageKind};
use rust_kernels::kernels;

/// This build's features `jit`, `aot` and `nvrtc`.
const FEATURES: (bool, bool, bool) = (
    cfg!(feature = "jit"),
    cfg!(feature = "aot"),
    cfg!(feature = "nvrtc"),
);

fn expected_archs() -> Option<Vec<u32>> {
    let s = std::env::var("RUST_KERNELS_EXPECT_ARCHS").ok()?;
    let mut v: Vec<u32> = s
        .split([';', ',', ' '])
        .filter(|t| !t.is_empty())
        .map(|t| {
            t.trim_start_matches("sm_")
                .parse()
                .expect("RUST_KERNELS_EXPECT_ARCHS")
        })
        .collect();
    v.sort();
    Some(v)
}

#[test]
fn the_mode_is_the_features() {
    let (jit, aot, nvrtc) = FEATURES;
    let mut parts = Vec::new();
    if aot {
        parts.push("aot");
    }
    if jit {
        parts.push("jit");
    }
    if nvrtc {
        parts.push("nvrtc");
    }
    assert_eq!(kernels::EMBED.mode(), parts.join("+"));
    assert_eq!(kernels::EMBED.name(), "kernels");
    let m = kernels::EMBED.manifest();
    assert!(m.starts_with("{\"name\":\"kernels\",\"mode\":"), "{m}");
    assert_eq!(
        kernels::EMBED.cuda_version() == 0,
        !(jit || aot),
        "a toolkit built images"
    );
}

#[test]
fn each_module_holds_its_kernel_in_the_images_the_mode_asks_for() {
    let (jit, aot, nvrtc) = FEATURES;
    let names: Vec<&str> = kernels::MODULES.iter().map(|m| m.name()).collect();
    assert_eq!(names, ["saxpy", "reduce"]);
    assert!(std::ptr::eq(kernels::MODULES[0], &kernels::SAXPY));
    assert!(std::ptr::eq(
        kernels::EMBED.module("reduce").unwrap(),
        &kernels::REDUCE
    ));
    for (m, kernel, source) in [
        (&kernels::SAXPY, "saxpy", "saxpy.cu"),
        (&kernels::REDUCE, "reduce_sum", "reduce.cu"),
    ] {
        assert_eq!(m.kernels(), [kernel], "{}", m.name());
        let kinds: Vec<ImageKind> = m.images().iter().map(|i| i.kind()).collect();
        let want: &[ImageKind] = match (aot, jit) {
            (true, _) => &[ImageKind::Fatbin],
            (false, true) => &[ImageKind::Ptx],
            (false, false) => &[],
        };
        assert_eq!(kinds, want, "{}", m.name());
        for i in m.images() {
            assert_eq!(i.bytes().as_ptr() as usize % 8, 0, "8-byte aligned");
            assert!(!i.bytes().is_empty());
        }
        if let Some(p) = m.ptx().next() {
            let text = p.ptx_text().unwrap();
            assert!(text.contains(&format!(".entry {kernel}(")), "{text}");
            assert!(text.contains(".target sm_75"), "compute_75 PTX");
        }
        if let Some(f) = m.fatbin() {
            assert_eq!(&f.bytes()[..4], &[0x50, 0xed, 0x55, 0xba], "fatbin magic");
            let sass: Vec<u32> = (f.fatbin_entries().iter())
                .filter_map(|e| match e {
                    FatbinEntry::Sass(sm) => Some(*sm),
                    FatbinEntry::Ptx(_) => None,
                })
                .collect();
            assert_eq!(sass, kernels::EMBED.archs(), "SASS for the arch list");
            if let Some(want) = expected_archs() {
                assert_eq!(sass, want, "RUST_KERNELS_EXPECT_ARCHS");
            }
            let ptx = f.fatbin_entries().contains(&FatbinEntry::Ptx(75));
            assert_eq!(ptx, jit, "a PTX fallback inside exactly when jit is on too");
        }
        if nvrtc {
            assert_eq!(m.sources(), [source]);
            assert!(m.has_sources());
        } else {
            assert!(m.sources().is_empty());
        }
    }
    // The sources and the header they include, once each.
    let files: Vec<&str> = kernels::EMBED.files().iter().map(|f| f.name()).collect();
    if nvrtc {
        assert_eq!(files, ["common.cuh", "reduce.cu", "saxpy.cu"]);
        let common = kernels::EMBED.files()[0].text().unwrap();
        assert!(common.contains("#define RK_BLOCK 256"));
        assert_eq!(
            rust_kernels::BLOCK,
            256,
            "the host's block size is the kernels'"
        );
    } else {
        assert!(files.is_empty());
    }
}

#[test]
fn embedded_sizes_add_up() {
    let sizes = rust_kernels::embedded_sizes();
    let total: usize = sizes.iter().map(|(_, b)| b).sum();
    assert_eq!(total, kernels::EMBED.embedded_bytes());
    assert!(total > 0);
}

/// The embedded sources compile with NVRTC for an H100 (sm_90) and hold their kernel: what a
/// GPU without a fitting image would run. NVRTC needs no GPU; without NVRTC the test skips.
#[test]
#[cfg(feature = "nvrtc")]
fn the_embedded_sources_compile_with_nvrtc() {
    let nv = match fatbuild_rt::Nvrtc::get() {
        Ok(n) => n,
        Err(e) => {
            eprintln!("SKIPPED: {e}");
            return;
        }
    };
    let target = nv.target(90).unwrap();
    for (m, kernel) in [(&kernels::SAXPY, "saxpy"), (&kernels::REDUCE, "reduce_sum")] {
        let out = nv.compile(m, &target).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(out.len(), 1, "{}", m.name());
        assert_eq!(&out[0].data[..4], b"\x7fELF", "a CUBIN for sm_90");
        let name = kernel.as_bytes();
        assert!(
            out[0].data.windows(name.len()).any(|w| w == name),
            "{kernel} in the CUBIN's symbols"
        );
    }
}
