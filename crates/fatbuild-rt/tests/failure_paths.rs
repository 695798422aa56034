//! What a machine without a GPU, a driver or NVRTC gets: a clear error from the first call,
//! never a crash. Real libraries only (a missing file, a file that is not a library, a library
//! that is not the driver, the toolkit's link stub); and, where this machine has NVRTC, its
//! compile path (which needs no GPU) and its error log.

#![cfg(feature = "driver")]

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use fatbuild_rt::__private::v1::{file, module};
use fatbuild_rt::{CompiledKind, Context, Driver, ErrorKind, Module, Nvrtc, SourceFile, Target};

mod common;
use common::{assert_says, nvrtc, COMMON};

/// The tests that set environment variables run one at a time.
static ENV: Mutex<()> = Mutex::new(());

fn tmp_file(name: &str, bytes: &[u8]) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("fail-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let p = d.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// A real library that is neither the driver nor NVRTC.
fn libm() -> &'static str {
    "libm.so.6"
}

#[test]
fn a_missing_driver_library_is_a_no_gpu_error_naming_the_fix() {
    let e = Driver::open("/nonexistent/libcuda.so.1").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoDriver);
    assert!(e.is_no_gpu());
    assert_says(
        &e,
        &[
            "cannot load the CUDA driver library /nonexistent/libcuda.so.1",
            "No such file",
            "nvidia-smi",
            "FATBUILD_RT_CUDA_LIB",
        ],
    );
}

#[test]
fn a_file_that_is_not_a_library_is_refused() {
    let p = tmp_file("libcuda.so.1", b"not an ELF file at all");
    let e = Driver::open(&p).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoDriver);
    assert!(e.message().contains(&p.display().to_string()), "{e}");
    assert!(
        e.message().contains("invalid ELF header") || e.message().contains("file too short"),
        "the loader's reason: {e}"
    );
}

#[test]
fn a_library_without_the_drivers_entry_points_is_refused() {
    let e = Driver::open(libm()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoDriver);
    assert!(
        e.message()
            .contains("is not a usable CUDA driver: it has no symbol cuInit"),
        "{e}"
    );
    assert!(
        e.message().contains("libm"),
        "names the file it loaded: {e}"
    );
}

#[test]
fn the_toolkits_link_stub_is_not_taken_for_a_driver() {
    let stub = [
        "/usr/local/cuda/lib64/stubs/libcuda.so",
        "/usr/local/cuda/targets/x86_64-linux/lib/stubs/libcuda.so",
    ]
    .into_iter()
    .find(|p| Path::new(p).exists());
    let Some(stub) = stub else {
        eprintln!("SKIPPED: no CUDA toolkit stub libcuda.so here");
        return;
    };
    let e = Driver::open(stub).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoDriver, "{e}");
    assert_eq!(e.code(), Some(34));
    assert!(e.is_no_gpu());
    assert_says(
        &e,
        &[
            "cuInit",
            "CUDA_ERROR_STUB_LIBRARY",
            "link stub, not a driver",
            "LD_LIBRARY_PATH",
        ],
    );
}

#[test]
fn the_environment_chooses_the_libraries() {
    let _g = ENV.lock().unwrap_or_else(|e| e.into_inner());
    std::env::set_var("FATBUILD_RT_CUDA_LIB", "/nonexistent/driver/libcuda.so.1");
    let e = Context::new(0).unwrap_err();
    std::env::remove_var("FATBUILD_RT_CUDA_LIB");
    assert_eq!(e.kind(), ErrorKind::NoDriver);
    assert!(
        e.message().contains("/nonexistent/driver/libcuda.so.1"),
        "{e}"
    );

    std::env::set_var("FATBUILD_RT_NVRTC_LIB", "/nonexistent/nvrtc/libnvrtc.so.13");
    let e = Nvrtc::get().unwrap_err();
    std::env::remove_var("FATBUILD_RT_NVRTC_LIB");
    assert_eq!(e.kind(), ErrorKind::NoNvrtc);
    assert_says(
        &e,
        &[
            "NVRTC",
            "not found",
            "/nonexistent/nvrtc/libnvrtc.so.13",
            "pip install nvidia-cuda-nvrtc",
            "FATBUILD_RT_NVRTC_LIB",
        ],
    );
}

#[test]
fn a_library_that_is_not_nvrtc_is_refused() {
    let e = Nvrtc::open("/nonexistent/libnvrtc.so.13").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoNvrtc);
    assert!(e.message().contains("/nonexistent/libnvrtc.so.13"), "{e}");
    let e = Nvrtc::open(libm()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoNvrtc);
    assert!(
        e.message().contains("is not NVRTC: it has no symbol nvrtc"),
        "{e}"
    );
}

const GOOD: SourceFile = file(
    "good.cu",
    b"#include \"common.cuh\"\nextern \"C\" __global__ void scale(float *p) { p[threadIdx.x] *= SCALE * FACTOR; }\n\0",
);
const BAD: SourceFile = file(
    "bad.cu",
    b"extern \"C\" __global__ void broken(float *p) {\n  p[0] = undeclared_name;\n}\n\0",
);
static FILES: [SourceFile; 3] = [BAD, COMMON, GOOD];
static GOOD_MODULE: Module = module(
    "good",
    &[],
    &["scale"],
    &["good.cu"],
    &["-DFACTOR=2.0f"],
    &FILES,
    "d",
    0,
);
static BAD_MODULE: Module = module("bad", &[], &["broken"], &["bad.cu"], &[], &FILES, "d", 0);

#[test]
fn nvrtc_compiles_the_embedded_sources_without_a_gpu() {
    let Some(nv) = nvrtc() else { return };
    let archs = nv.supported_archs();
    assert!(
        !archs.is_empty(),
        "NVRTC {:?} lists its archs",
        nv.version()
    );
    let top = *archs.last().unwrap();
    // A CUBIN for an arch it knows, with the header and the module's define.
    let t = nv.target(90).unwrap();
    assert_eq!(
        t,
        Target {
            arch: 90,
            cubin: true
        }
    );
    assert_eq!(t.option(), "-arch=sm_90");
    let out = nv.compile(&GOOD_MODULE, &t).unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].kind, CompiledKind::Cubin);
    assert_eq!(&out[0].data[..4], b"\x7fELF");
    // PTX for a GPU newer than NVRTC knows: its newest arch, for the driver to JIT.
    let t = nv.target(top + 1000).unwrap();
    assert_eq!(
        t,
        Target {
            arch: top,
            cubin: false
        }
    );
    let out = nv.compile(&GOOD_MODULE, &t).unwrap();
    assert_eq!(out[0].kind, CompiledKind::Ptx);
    let ptx = String::from_utf8_lossy(&out[0].data);
    assert!(ptx.contains(".entry scale") && ptx.ends_with('\0'), "{ptx}");
    // A GPU older than every arch it knows.
    let e = nv.target(archs[0] - 1).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoImageForGpu);
    assert!(
        e.message()
            .contains(&format!("compiles for sm_{} and newer only", archs[0])),
        "{e}"
    );
}

#[test]
fn a_compile_error_carries_nvrtcs_log() {
    let Some(nv) = nvrtc() else { return };
    let e = nv
        .compile(&BAD_MODULE, &nv.target(90).unwrap())
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Compile, "{e}");
    assert_eq!(e.code(), Some(6), "NVRTC_ERROR_COMPILATION");
    assert_says(
        &e,
        &[
            "module `bad`",
            "failed to compile bad.cu (-arch=sm_90)",
            "nvrtcCompileProgram",
            "undeclared_name",
            "bad.cu(2)",
        ],
    );
    // A module without sources says why it cannot be compiled.
    static NONE: Module = module("none", &[], &[], &[], &[], &[], "", 0);
    let e = nv.compile(&NONE, &nv.target(90).unwrap()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoImageForGpu);
    assert!(e.message().contains("embeds no sources"), "{e}");
}

#[test]
fn nvrtc_debug_shows_its_file_version_and_archs() {
    let Some(nv) = nvrtc() else { return };
    let want = format!(
        "Nvrtc {{ path: {:?}, version: {:?}, archs: {:?}, .. }}",
        nv.path(),
        nv.version(),
        nv.supported_archs()
    );
    assert_eq!(format!("{nv:?}"), want);
}
