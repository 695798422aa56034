//! What build.rs told cargo for this very build (its `output` file beside `OUT_DIR`): the rerun
//! triggers are exactly the inputs. Runs without a GPU; `just test` runs it in the jit, the
//! aot and (scripts/check_no_toolkit_nvrtc.sh) the nvrtc-only build.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

/// The `cargo:` lines of this build's build-script run, without the prefix.
fn lines() -> Vec<String> {
    let file = Path::new(env!("OUT_DIR")).parent().unwrap().join("output");
    let text =
        fs::read_to_string(&file).unwrap_or_else(|e| panic!("reading {}: {e}", file.display()));
    text.lines()
        .filter_map(|l| l.strip_prefix("cargo:"))
        .map(str::to_string)
        .collect()
}

fn has(lines: &[String], want: &str) -> bool {
    lines.iter().any(|l| l == want)
}

#[test]
fn the_c_compilers_variables_rerun_the_build() {
    let l = lines();
    // `cc` reads these (its own version prints no rerun lines): CC=clang or CFLAGS=-DX=1 must
    // not leave a Fresh build with the old C core.
    for base in ["CC", "CFLAGS", "AR"] {
        for want in [
            base.to_string(),
            format!("HOST_{base}"),
            format!("TARGET_{base}"),
        ] {
            assert!(
                has(&l, &format!("rerun-if-env-changed={want}")),
                "{want}: {l:#?}"
            );
        }
        // CC_<target> in both spellings (x86_64-unknown-linux-gnu, x86_64_unknown_linux_gnu).
        let prefix = format!("rerun-if-env-changed={base}_");
        let dashed: Vec<&str> = l
            .iter()
            .filter_map(|x| x.strip_prefix(&prefix))
            .filter(|t| t.contains('-'))
            .collect();
        assert_eq!(dashed.len(), 1, "{base}_<target>: {l:#?}");
        let under = format!("{prefix}{}", dashed[0].replace('-', "_"));
        assert!(has(&l, &under), "{under}: {l:#?}");
    }
    for v in [
        "CRATE_CC_NO_DEFAULTS",
        "WARPFFT_WERROR",
        "WARPFFT_NVCC_FLAGS",
    ] {
        assert!(has(&l, &format!("rerun-if-env-changed={v}")), "{v}: {l:#?}");
    }
    // nvcc's own variables change its output; an nvrtc-only build runs no nvcc (nor looks
    // for a toolkit), so it does not watch them.
    for v in [
        "NVCC_APPEND_FLAGS",
        "NVCC_PREPEND_FLAGS",
        "NVCC_CCBIN",
        "NVCC",
        "CUDA_PATH",
    ] {
        let watched = has(&l, &format!("rerun-if-env-changed={v}"));
        assert_eq!(watched, images(), "{v}: {l:#?}");
    }
}

/// Whether this build compiles images (PTX, SASS), i.e. runs the toolkit.
fn images() -> bool {
    cfg!(feature = "jit") || cfg!(feature = "aot")
}

#[test]
fn exactly_the_inputs_are_watched_each_once() {
    let l = lines();
    let watched: Vec<&str> = l
        .iter()
        .filter_map(|x| x.strip_prefix("rerun-if-changed="))
        .collect();
    for want in [
        "build.rs",
        "c_core/src",
        "c_core/include",
        "kernels/spreadinterp.cu",
        "kernels/spreadinterp/tile.cuh",
        "kernels/scan.cuh",
    ] {
        assert!(
            watched.iter().any(|w| w.ends_with(want)),
            "{want}: {watched:#?}"
        );
    }
    // Not all of c_core: touching a C test must not recompile the core and the kernels' C.
    assert!(
        !watched
            .iter()
            .any(|w| *w == "c_core" || w.contains("c_core/tests")),
        "{watched:#?}"
    );
    let unique: BTreeSet<&String> = l.iter().collect();
    assert_eq!(unique.len(), l.len(), "repeated lines: {l:#?}");
    // The arch list is read (and so watched) only by the aot builds.
    let archs = has(&l, "rerun-if-env-changed=WARPFFT_CUDA_ARCHS");
    assert_eq!(archs, cfg!(feature = "aot"), "{l:#?}");
}

#[test]
fn the_nvcc_in_use_is_watched() {
    let l = lines();
    if !images() {
        let nvcc = l
            .iter()
            .find(|x| x.contains("nvcc") && !x.contains("NVCC_FLAGS"));
        assert_eq!(nvcc, None, "an nvrtc-only build watches no nvcc: {l:#?}");
        return;
    }
    let nvcc: Vec<&String> = l
        .iter()
        .filter(|x| x.starts_with("rerun-if-changed=") && x.ends_with("/nvcc"))
        .collect();
    assert!(!nvcc.is_empty(), "{l:#?}");
    for n in nvcc {
        let p = n.strip_prefix("rerun-if-changed=").unwrap();
        assert!(Path::new(p).is_file(), "{p}");
    }
}
