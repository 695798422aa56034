//! Build script: kernels → toolchain (crates/fatbuild) → C core (cc) → static archive for Rust
//! and `libwarpfft.so` for everyone else → (optionally) bindgen.
//!
//! Inputs (each a `rerun-if-env-changed`): `WARPFFT_CUDA_ARCHS`, `WARPFFT_NVCC_FLAGS`, `NVCC`,
//! `CUDA_PATH`, `CUDA_HOME` (read by fatbuild), `CC`/`CFLAGS` (read by cc).

use std::env;
use std::fs;
use std::path::{Path, PathBuf};

/// Spreading/interpolation kernels are specialised on the kernel width for unrolling; these are
/// the widths embedded per precision (c_core/src/params.c refuses a tol that needs more).
const WIDTHS_F32: std::ops::RangeInclusive<u32> = 2..=12;
const WIDTHS_F64: std::ops::RangeInclusive<u32> = 2..=16;

fn main() {
    let out = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR is set by cargo"));
    let jit = env::var_os("CARGO_FEATURE_JIT").is_some();
    let aot = env::var_os("CARGO_FEATURE_AOT").is_some();

    let embedded = match build_kernels(jit, aot) {
        Ok(e) => e,
        Err(e) => {
            // One clear message; cargo shows it under "failed to run custom build command".
            eprintln!("\nwarpfft: kernel build failed\n{e}\n");
            std::process::exit(1);
        }
    };

    let core = compile_c_core(&out, &embedded.c_file);
    link_shared_library(&out, &core);
    generate_bindings(&out);

    println!("cargo:root={}", out.display());
    println!(
        "cargo:include={}",
        Path::new("c_core/include")
            .canonicalize()
            .unwrap()
            .display()
    );
    println!("cargo:rerun-if-changed=c_core");
    println!("cargo:rerun-if-changed=build.rs");
}

fn build_kernels(jit: bool, aot: bool) -> Result<fatbuild::Embedded, fatbuild::Error> {
    let mut b = fatbuild::Build::new()
        .mode(fatbuild::Mode::from_features(jit, aot)?)
        .archs_from_env("WARPFFT_CUDA_ARCHS")
        .nvcc_flags_from_env("WARPFFT_NVCC_FLAGS")
        .include("kernels")
        .module(
            fatbuild::Module::new("sort")
                .source("kernels/sort.cu")
                .source("kernels/scan.cu"),
        );
    for (p, widths) in [("f32", WIDTHS_F32), ("f64", WIDTHS_F64)] {
        let prec = &p[1..];
        for stage in ["prep", "direct", "type3"] {
            b = b.module(
                fatbuild::Module::new(format!("{stage}_{p}"))
                    .source(format!("kernels/{stage}.cu"))
                    .define("WF_PREC", prec),
            );
        }
        for dim in 1..=3 {
            for w in widths.clone() {
                b = b.module(
                    fatbuild::Module::new(format!("si_{dim}d_{p}_w{w}"))
                        .source("kernels/spreadinterp.cu")
                        .define("WF_DIM", dim.to_string().as_str())
                        .define("WF_PREC", prec)
                        .define("WF_W", w.to_string().as_str()),
                );
            }
        }
    }
    b.embed("warpfft_kernels")
}

/// Compiles the C core and the generated blob source into `libwarpfft_core.a` (position
/// independent, hidden visibility except the `WARPFFT_API` functions) and links it into the
/// Rust crate.
fn compile_c_core(out: &Path, kernels_c: &Path) -> PathBuf {
    let mut sources: Vec<PathBuf> = fs::read_dir("c_core/src")
        .expect("c_core/src")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .collect();
    sources.sort();
    let mut cc = cc::Build::new();
    cc.files(&sources)
        .file(kernels_c)
        .include("c_core/include")
        .include("c_core/src")
        .include(out)
        .define("WARPFFT_BUILDING", None)
        .define("_GNU_SOURCE", None)
        .pic(true)
        .warnings(true)
        .extra_warnings(true)
        .flag("-std=c11")
        .flag("-fvisibility=hidden")
        .flag("-pthread")
        .opt_level(2);
    if env::var_os("WARPFFT_WERROR").is_some() {
        cc.warnings_into_errors(true);
    }
    println!("cargo:rerun-if-env-changed=WARPFFT_WERROR");
    cc.compile("warpfft_core");
    println!("cargo:rustc-link-lib=dylib=dl");
    println!("cargo:rustc-link-lib=dylib=pthread");
    println!("cargo:rustc-link-lib=dylib=m");
    out.join("libwarpfft_core.a")
}

/// Links `libwarpfft.so` with the C compiler (a Rust cdylib would hide the C symbols: NOTES.md)
/// and copies it next to the profile's binaries (`target/<profile>/`) so C, Python and tests
/// find it at a stable place.
fn link_shared_library(out: &Path, core: &Path) {
    let version = env::var("CARGO_PKG_VERSION").unwrap();
    let major = version.split('.').next().unwrap().to_string();
    let lib_dir = out.join("lib");
    fs::create_dir_all(&lib_dir).unwrap();
    let real = lib_dir.join(format!("libwarpfft.so.{version}"));
    let compiler = cc::Build::new().get_compiler();
    let status = compiler
        .to_command()
        .arg("-shared")
        .arg(format!("-Wl,-soname,libwarpfft.so.{major}"))
        .arg("-o")
        .arg(&real)
        .arg("-Wl,--whole-archive")
        .arg(core)
        .arg("-Wl,--no-whole-archive")
        .args(["-ldl", "-lpthread", "-lm", "-Wl,--no-undefined"])
        .status()
        .expect("running the C compiler to link libwarpfft.so");
    assert!(status.success(), "linking libwarpfft.so failed: {status}");
    for link in [
        format!("libwarpfft.so.{major}"),
        "libwarpfft.so".to_string(),
    ] {
        let p = lib_dir.join(&link);
        let _ = fs::remove_file(&p);
        std::os::unix::fs::symlink(real.file_name().unwrap(), &p).unwrap();
    }
    if let Some(profile_dir) = profile_dir(out) {
        for name in [
            format!("libwarpfft.so.{major}"),
            "libwarpfft.so".to_string(),
        ] {
            let dst = profile_dir.join(name);
            let _ = fs::remove_file(&dst);
            fs::copy(&real, &dst).unwrap();
        }
    }
}

/// `target/<profile>` from `target/<profile>/build/<pkg>-<hash>/out`.
fn profile_dir(out: &Path) -> Option<PathBuf> {
    let dir = out.parent()?.parent()?.parent()?;
    (dir.join("build").is_dir()).then(|| dir.to_path_buf())
}

#[cfg(feature = "bindgen")]
fn generate_bindings(out: &Path) {
    let bindings = bindgen::Builder::default()
        .header("c_core/include/warpfft.h")
        .allowlist_function("warpfft_.*")
        .allowlist_type("warpfft_.*")
        .allowlist_var("WARPFFT_.*")
        .default_enum_style(bindgen::EnumVariation::Consts)
        .prepend_enum_name(false)
        .size_t_is_usize(true)
        .layout_tests(true)
        .generate_comments(true)
        .generate()
        .expect("bindgen failed on c_core/include/warpfft.h");
    bindings
        .write_to_file(out.join("bindings.rs"))
        .expect("writing bindings.rs");
}

#[cfg(not(feature = "bindgen"))]
fn generate_bindings(_out: &Path) {}
