//! Build script: kernels → toolchain (crates/fatbuild) → C core (cc) → static archive for Rust
//! and `libwarpfft.so` for everyone else → (optionally) bindgen.
//!
//! Inputs: the files under `c_core/src` and `c_core/include` and this file
//! (`rerun-if-changed`); the variables the `cc` crate reads (`CC`, `CFLAGS`, `AR`, each also
//! as `<name>_<target>`, `<name>_<target_with_underscores>`, `HOST_<name>`, `TARGET_<name>`;
//! `CRATE_CC_NO_DEFAULTS`, `CROSS_COMPILE`, `RUSTC_WRAPPER`), which this version of `cc` does
//! not announce itself, and `WARPFFT_WERROR` (`rerun-if-env-changed`); fatbuild announces its
//! own (`WARPFFT_CUDA_ARCHS` in aot builds, `WARPFFT_NVCC_FLAGS`, and unless `nvrtc` is the only kernel feature `NVCC`, `CUDA_PATH`,
//! `CUDA_HOME`, `NVCC_APPEND_FLAGS` & co., the kernels, the nvcc binary).
//!
//! Products: `OUT_DIR/lib/libwarpfft.so{.VERSION,.MAJOR,}` for this exact build (features,
//! archs); `scripts/libwarpfft_path.sh` asks cargo for it. A copy goes to `target/<profile>/`
//! (written atomically) for convenience only: it is whatever build ran its build script
//! last.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};

/// Spreading/interpolation kernels are specialised on the kernel width for unrolling; these are
/// the widths embedded per precision (c_core/src/params/params.c refuses a tol that needs more).
const WIDTHS_F32: std::ops::RangeInclusive<u32> = 2..=12;
const WIDTHS_F64: std::ops::RangeInclusive<u32> = 2..=16;

/// What the `cc` crate reads from the environment, by base name (each also with the target
/// and `HOST_`/`TARGET_` forms) and as is.
const CC_VARS: &[&str] = &["CC", "CFLAGS", "AR"];
const CC_PLAIN_VARS: &[&str] = &["CRATE_CC_NO_DEFAULTS", "CROSS_COMPILE", "RUSTC_WRAPPER"];

fn main() {
    // The inputs first: they must reach cargo even when a later step fails.
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=c_core/src");
    println!("cargo:rerun-if-changed=c_core/include");
    for var in cc_env_vars(&env::var("TARGET").unwrap_or_default()) {
        println!("cargo:rerun-if-env-changed={var}");
    }
    if let Err(e) = run() {
        // One clear message; cargo shows it under "failed to run custom build command".
        eprintln!("\nwarpfft: build script failed\n{e}\n");
        std::process::exit(1);
    }
}

/// Every variable the `cc` crate consults for `CC_VARS` (in its order) and `CC_PLAIN_VARS`.
fn cc_env_vars(target: &str) -> Vec<String> {
    let target_u = target.replace('-', "_");
    let mut vars = Vec::new();
    for base in CC_VARS {
        vars.push(format!("{base}_{target}"));
        vars.push(format!("{base}_{target_u}"));
        vars.push(format!("HOST_{base}"));
        vars.push(format!("TARGET_{base}"));
        vars.push(base.to_string());
    }
    vars.extend(CC_PLAIN_VARS.iter().map(|v| v.to_string()));
    vars.dedup();
    vars
}

/// An error message naming what failed and where.
type Res<T> = Result<T, String>;

fn io_err(what: &str, path: &Path) -> impl FnOnce(std::io::Error) -> String {
    let path = path.display().to_string();
    let what = what.to_string();
    move |e| format!("{what} `{path}` failed: {e}")
}

fn run() -> Res<()> {
    let out = PathBuf::from(env::var("OUT_DIR").map_err(|_| "OUT_DIR is not set (cargo sets it)")?);
    let jit = env::var_os("CARGO_FEATURE_JIT").is_some();
    let aot = env::var_os("CARGO_FEATURE_AOT").is_some();
    let nvrtc = env::var_os("CARGO_FEATURE_NVRTC").is_some();

    let embedded = fatbuild::Mode::from_features(jit, aot, nvrtc)
        .and_then(build_kernels)
        .map_err(|e| format!("kernel build failed\n{e}"))?;

    let kernels_c = (embedded.c_file.as_deref()).ok_or("fatbuild wrote no C embedding")?;
    let core = compile_c_core(&out, kernels_c)?;
    link_shared_library(&out, &core)?;
    generate_bindings(&out);

    println!("cargo:root={}", out.display());
    let include = Path::new("c_core/include");
    let include = include
        .canonicalize()
        .map_err(io_err("resolving", include))?;
    println!("cargo:include={}", include.display());
    Ok(())
}

/// The kernel modules, built (or, `nvrtc` alone, only their sources read: no toolkit needed)
/// by fatbuild, whose output for the C core is its C embedding (`OUT_DIR/warpfft_kernels.{c,h}`).
fn build_kernels(mode: fatbuild::Mode) -> Result<fatbuild::Embedded, fatbuild::Error> {
    let mut b = fatbuild::Build::new()
        .mode(mode)
        .emit_c(true)
        .emit_rust(false)
        .archs_from_env("WARPFFT_CUDA_ARCHS")
        .nvcc_flags_from_env("WARPFFT_NVCC_FLAGS")
        .include("kernels")
        .module(fatbuild::Module::new("sort").source("kernels/sort.cu"))
        // The multi-block bin scan: loaded only by plans with many bins (WF_SCAN_BIG_BINS,
        // c_core/src/params/params.h), so a small plan's first-use JIT does not compile it.
        .module(fatbuild::Module::new("scan_big").source("kernels/scan_big.cu"))
        // Stable (deterministic) ranks inside bins: loaded only by deterministic plans.
        .module(fatbuild::Module::new("sort_stable").source("kernels/sort_stable.cu"));
    // Small modules, one per job a plan has: a plan loads only the ones it launches, and in a
    // `jit` build each is JIT-compiled on its first use (in parallel: module.c), so a first plan
    // waits for its largest module, and nothing it does not launch is compiled (issue 12).
    for (p, widths) in [("f32", WIDTHS_F32), ("f64", WIDTHS_F64)] {
        let prec = &p[1..];
        for stage in ["direct", "type3"] {
            b = b.module(
                fatbuild::Module::new(format!("{stage}_{p}"))
                    .source(format!("kernels/{stage}.cu"))
                    .define("WF_PREC", prec),
            );
        }
        // The Toeplitz normal operator's pointwise steps (c_core/src/plans/toeplitz.c).
        b = b.module(
            fatbuild::Module::new(format!("toeplitz_{p}"))
                .source("kernels/toeplitz.cu")
                .define("WF_PREC", prec),
        );
        for dim in 1..=3 {
            // setpts' binning; the FFT's deconvolution (type 1) or amplification (type 2)
            for (part, def) in [
                ("bin", "WF_PREP_BIN"),
                ("deconvolve", "WF_PREP_DECONVOLVE"),
                ("amplify", "WF_PREP_AMPLIFY"),
            ] {
                b = b.module(
                    fatbuild::Module::new(format!("{part}_{dim}d_{p}"))
                        .source("kernels/prep.cu")
                        .define("WF_DIM", dim.to_string().as_str())
                        .define("WF_PREC", prec)
                        .define("WF_PREP_PART", def),
                );
            }
            // The width the points take (types 1 and 2): the offsets' statistics and the
            // choice, loaded only by plans whose width has narrower candidates.
            b = b.module(
                fatbuild::Module::new(format!("offsets_{dim}d_{p}"))
                    .source("kernels/offsets.cu")
                    .define("WF_DIM", dim.to_string().as_str())
                    .define("WF_PREC", prec),
            );
            // Spreading (type 1) or interpolation (type 2), by the method the plan chose; the
            // output-driven method (od) spreads only. Each also real-valued (real strengths and
            // fine grid, `real_data`): precision string f32r / f64r, -DWF_REAL=1.
            for w in widths.clone() {
                for (part, def) in [("spread", "WF_SI_SPREAD"), ("interp", "WF_SI_INTERP")] {
                    let methods: &[(&str, &str)] = if part == "spread" {
                        &[("gm", "WF_SI_GM"), ("sm", "WF_SI_SM"), ("od", "WF_SI_OD")]
                    } else {
                        &[("gm", "WF_SI_GM"), ("sm", "WF_SI_SM")]
                    };
                    for &(method, mdef) in methods {
                        for real in [false, true] {
                            let ps = if real { format!("{p}r") } else { p.to_string() };
                            let mut m =
                                fatbuild::Module::new(si_module_name(dim, &ps, w, part, method))
                                    .source("kernels/spreadinterp.cu")
                                    .define("WF_DIM", dim.to_string().as_str())
                                    .define("WF_PREC", prec)
                                    .define("WF_W", w.to_string().as_str())
                                    .define("WF_SI_PART", def)
                                    .define("WF_SI_METHOD", mdef);
                            if real {
                                m = m.define("WF_REAL", "1");
                            }
                            b = b.module(m);
                        }
                    }
                }
            }
        }
    }
    b.embed("warpfft_kernels")
}

/// A spreading module's name by the rule of `kernels/module_names.h` (`WF_SI_MODULE_FMT`, a
/// printf format of dim, precision, width, direction and method that the C core's
/// `wf_si_names` fills too): its `%d` and `%s` replaced in order.
fn si_module_name(dim: u32, prec: &str, width: u32, dir: &str, method: &str) -> String {
    const NAMES: &str = include_str!("kernels/module_names.h");
    let fmt = NAMES
        .lines()
        .find_map(|l| l.strip_prefix("#define WF_SI_MODULE_FMT"))
        .and_then(|v| v.trim().strip_prefix('"')?.strip_suffix('"'))
        .expect("kernels/module_names.h defines WF_SI_MODULE_FMT as a string");
    let mut args = [
        dim.to_string(),
        prec.into(),
        width.to_string(),
        dir.into(),
        method.into(),
    ]
    .into_iter();
    let mut name = String::new();
    let mut chars = fmt.chars();
    while let Some(c) = chars.next() {
        match c {
            '%' if matches!(chars.next(), Some('d' | 's')) => {
                name += &args.next().expect("WF_SI_MODULE_FMT takes five arguments")
            }
            '%' => panic!("WF_SI_MODULE_FMT may use %d and %s only"),
            c => name.push(c),
        }
    }
    name
}

/// Compiles the C core and the generated blob source into `libwarpfft_core.a` (position
/// independent, hidden visibility except the `WARPFFT_API` functions) and links it into the
/// Rust crate.
fn compile_c_core(out: &Path, kernels_c: &Path) -> Res<PathBuf> {
    // c_core/src holds one folder per stage (docs/layout.md); headers are named with their
    // folder (`#include "runtime/driver.h"`), from c_core/src.
    let src = Path::new("c_core/src");
    let mut sources = Vec::new();
    c_sources(src, &mut sources)?;
    sources.sort();
    let mut cc = cc::Build::new();
    cc.files(&sources)
        .file(kernels_c)
        .include("c_core/include")
        .include(src)
        .include("kernels") // kernel_shape.h, module_names.h, offsets_bound.h: shared
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
    cc.try_compile("warpfft_core")
        .map_err(|e| format!("compiling the C core failed: {e}"))?;
    println!("cargo:rustc-link-lib=dylib=dl");
    println!("cargo:rustc-link-lib=dylib=pthread");
    println!("cargo:rustc-link-lib=dylib=m");
    Ok(out.join("libwarpfft_core.a"))
}

/// The `.c` files under `dir`, at any depth, into `sources`.
fn c_sources(dir: &Path, sources: &mut Vec<PathBuf>) -> Res<()> {
    for e in fs::read_dir(dir).map_err(io_err("listing", dir))? {
        let p = e.map_err(io_err("listing", dir))?.path();
        if p.is_dir() {
            c_sources(&p, sources)?;
        } else if p.extension().is_some_and(|x| x == "c") {
            sources.push(p);
        }
    }
    Ok(())
}

/// Links `libwarpfft.so` with the C compiler (a Rust cdylib would hide the C symbols: NOTES.md)
/// into `OUT_DIR/lib` (where `scripts/libwarpfft_path.sh` finds it through cargo), and copies
/// it, atomically, next to the profile's binaries (`target/<profile>/`) for convenience.
fn link_shared_library(out: &Path, core: &Path) -> Res<()> {
    let version = env::var("CARGO_PKG_VERSION").map_err(|_| "CARGO_PKG_VERSION is not set")?;
    let major = version.split('.').next().unwrap_or("0").to_string();
    let lib_dir = out.join("lib");
    fs::create_dir_all(&lib_dir).map_err(io_err("creating", &lib_dir))?;
    let real = lib_dir.join(format!("libwarpfft.so.{version}"));
    let compiler = cc::Build::new()
        .try_get_compiler()
        .map_err(|e| format!("finding the C compiler to link libwarpfft.so failed: {e}"))?;
    let mut cmd = compiler.to_command();
    let status = cmd
        .arg("-shared")
        .arg(format!("-Wl,-soname,libwarpfft.so.{major}"))
        .arg("-o")
        .arg(&real)
        .arg("-Wl,--whole-archive")
        .arg(core)
        .arg("-Wl,--no-whole-archive")
        .args(["-ldl", "-lpthread", "-lm", "-Wl,--no-undefined"])
        .status()
        .map_err(|e| format!("running the C compiler ({cmd:?}) to link libwarpfft.so: {e}"))?;
    if !status.success() {
        return Err(format!("linking libwarpfft.so ({cmd:?}) failed: {status}"));
    }
    let real_name = format!("libwarpfft.so.{version}");
    for link in [
        format!("libwarpfft.so.{major}"),
        "libwarpfft.so".to_string(),
    ] {
        let p = lib_dir.join(&link);
        let tmp = lib_dir.join(format!(".{link}.tmp"));
        let _ = fs::remove_file(&tmp);
        std::os::unix::fs::symlink(&real_name, &tmp).map_err(io_err("creating the link", &tmp))?;
        fs::rename(&tmp, &p).map_err(io_err("renaming into place", &p))?;
    }
    if let Some(profile_dir) = profile_dir(out) {
        for name in [
            format!("libwarpfft.so.{major}"),
            "libwarpfft.so".to_string(),
        ] {
            // Temp + rename: a reader sees the old library or the new one, never a partial
            // file. The temp name is unique to this build script run (OUT_DIR is).
            let dst = profile_dir.join(&name);
            let tag = out.parent().and_then(Path::file_name).unwrap_or_default();
            let tmp = profile_dir.join(format!(".{name}.{}.tmp", tag.to_string_lossy()));
            fs::copy(&real, &tmp).map_err(io_err("copying libwarpfft.so to", &tmp))?;
            fs::rename(&tmp, &dst).map_err(io_err("renaming into place", &dst))?;
        }
    }
    Ok(())
}

/// `target/<profile>` from `target/<profile>/build/<pkg>-<hash>/out`.
fn profile_dir(out: &Path) -> Option<PathBuf> {
    let dir = out.parent()?.parent()?.parent()?;
    (dir.join("build").is_dir()).then(|| dir.to_path_buf())
}

#[cfg(feature = "bindgen")]
fn generate_bindings(out: &Path) {
    // The whole ABI: warpfft.h (which includes its parts) and the XLA handlers' exports, whose
    // XLA types stay opaque (the handlers are called by XLA, not from Rust).
    let bindings = bindgen::Builder::default()
        .header("c_core/include/warpfft.h")
        .header("c_core/include/warpfft_xla.h")
        .opaque_type("XLA_FFI_.*")
        .allowlist_function("warpfft_.*")
        .allowlist_type("warpfft_.*")
        .allowlist_type("XLA_FFI_(Error|CallFrame)")
        .allowlist_var("WARPFFT_.*")
        .default_enum_style(bindgen::EnumVariation::Consts)
        .prepend_enum_name(false)
        .size_t_is_usize(true)
        .layout_tests(true)
        .generate_comments(true)
        .generate()
        .expect("bindgen failed on c_core/include/warpfft.h or warpfft_xla.h");
    bindings
        .write_to_file(out.join("bindings.rs"))
        .expect("writing bindings.rs");
}

#[cfg(not(feature = "bindgen"))]
fn generate_bindings(_out: &Path) {}
