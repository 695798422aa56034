//! The loader's failure paths through the public API, on a stand-in driver
//! (`tests/standin/libcuda_standin.c`, built here with `cc`) that reports a GPU of any arch,
//! accepts or refuses module loads on request, and logs what it was given. It runs nothing, so
//! these tests prove which path the loader takes and what it says, never a kernel's result
//! (the example crate does that on a GPU). With a real NVRTC present, the NVRTC path and its
//! disk cache run for real (compilation needs no GPU).

#![cfg(feature = "driver")]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, MutexGuard, OnceLock};

use fatbuild_rt::__private::v1::{file, image, module, sass, FATBIN, PTX};
use fatbuild_rt::{
    Context, Driver, ErrorKind, FatbinEntry, Image, KernelCache, LoadOptions, LoadedFrom, Module,
    SourceFile,
};

mod common;
use common::{assert_says, nvrtc, COMMON};

/// The stand-in reads the environment on every call: one scenario at a time.
static ENV: Mutex<()> = Mutex::new(());

fn lock() -> MutexGuard<'static, ()> {
    ENV.lock().unwrap_or_else(|e| e.into_inner())
}

fn tmp(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("standin-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The stand-in library, built once; `None` (reported) without a C compiler.
fn standin() -> Option<&'static Path> {
    static LIB: OnceLock<Option<PathBuf>> = OnceLock::new();
    LIB.get_or_init(|| {
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("libcuda_standin.so");
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/standin/libcuda_standin.c");
        let st = Command::new("cc")
            .args([
                "-shared", "-fPIC", "-O1", "-Wall", "-Wextra", "-Werror", "-o",
            ])
            .arg(&out)
            .arg(&src)
            .status();
        match st {
            Ok(s) if s.success() => Some(out),
            other => {
                eprintln!("SKIPPED: cannot build the stand-in driver with cc: {other:?}");
                None
            }
        }
    })
    .as_deref()
}

fn set(vars: &[(&str, &str)]) {
    for k in [
        "FBRT_STANDIN_DEVICES",
        "FBRT_STANDIN_SM",
        "FBRT_STANDIN_LOAD",
        "FBRT_STANDIN_LOG",
    ] {
        std::env::remove_var(k);
    }
    for (k, v) in vars {
        std::env::set_var(k, v);
    }
}

/// A context on the stand-in's GPU of arch `sm`, which logs the loads it is given to the file
/// returned, and a kernel cache: both in a fresh directory `name`.
fn gpu(lib: &Path, name: &str, sm: &str) -> (Context, KernelCache, PathBuf) {
    let dir = tmp(name);
    let log = dir.join("loads");
    set(&[
        ("FBRT_STANDIN_SM", sm),
        ("FBRT_STANDIN_LOG", log.to_str().unwrap()),
    ]);
    let ctx = Context::with_driver(Driver::open(lib).unwrap(), 0).unwrap();
    (ctx, KernelCache::at(dir.join("cache")), log)
}

fn log_lines(p: &Path) -> Vec<String> {
    std::fs::read_to_string(p)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

const FATBIN_BYTES: &[u8] = b"\x50\xed\x55\xba\x01\x00\x10\x00fake fatbin";
static SASS_80_90: [FatbinEntry; 2] = [sass(80), sass(90)];
static NO_FILES: [SourceFile; 0] = [];

/// A module of kernel `k` that CUDA 13 built into `images`, without sources.
const fn built(name: &'static str, images: &'static [Image]) -> Module {
    module(name, images, &["k"], &[], &[], &NO_FILES, "", 13000)
}

static AOT_ONLY: Module = built(
    "aot_only",
    &[image(FATBIN, "fatbin", FATBIN_BYTES, &SASS_80_90)],
);
/// A fatbin whose contents were not recorded, and PTX: the driver decides.
static UNRECORDED: Module = built(
    "unrecorded",
    &[
        image(FATBIN, "fatbin", FATBIN_BYTES, &[]),
        image(PTX, "a", b".version 9.0\n.target sm_75\n\0", &[]),
    ],
);

const ONE: SourceFile = file(
    "one.cu",
    b"#include \"common.cuh\"\nextern \"C\" __global__ void k(float *p) { p[threadIdx.x] *= SCALE; }\n\0",
);
const TWO: SourceFile = file(
    "two.cu",
    b"extern __device__ float helper(float);\nextern \"C\" __global__ void k2(float *p) { p[0] = helper(p[1]); }\n\0",
);
const HELPER: SourceFile = file(
    "helper.cu",
    b"__device__ float helper(float x) { return 2 * x; }\n\0",
);
static FILES: [SourceFile; 3] = [COMMON, ONE, TWO];
static FILES_LINKED: [SourceFile; 4] = [COMMON, HELPER, ONE, TWO];
static SOURCES_ONLY: Module = module(
    "sources_only",
    &[],
    &["k"],
    &["one.cu"],
    &["-DUNUSED=1"],
    &FILES,
    "digest-1",
    0,
);
static TWO_SOURCES: Module = module(
    "two_sources",
    &[],
    &["k2"],
    &["two.cu", "helper.cu"],
    &[],
    &FILES_LINKED,
    "digest-2",
    0,
);

#[test]
fn no_device_is_a_no_gpu_error() {
    let _g = lock();
    let Some(lib) = standin() else { return };
    set(&[("FBRT_STANDIN_DEVICES", "0")]);
    let e = Driver::open(lib)
        .and_then(|d| Context::with_driver(d, 0))
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoDevice, "{e}");
    assert!(e.is_no_gpu());
    assert!(e.message().contains("GPU"), "{e}");
    set(&[]);
    let d = Driver::open(lib).unwrap();
    assert_eq!(d.version(), 13000);
    let e = Context::with_driver(d, 3).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoDevice);
    assert!(
        e.message()
            .contains("device 3 does not exist: the driver sees 1 GPU(s)"),
        "{e}"
    );
}

#[test]
fn a_gpu_outside_the_arch_list_gets_the_wrong_arch_error() {
    let _g = lock();
    let Some(lib) = standin() else { return };
    let (ctx, cache, log) = gpu(lib, "arch", "75");
    assert_eq!(ctx.sm(), 75);
    let opts = LoadOptions {
        cache: Some(&cache),
        nvrtc: None,
    };
    let e = ctx.load_with(&AOT_ONLY, &opts).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoImageForGpu, "{e}");
    assert_says(
        &e,
        &[
            "sm_75",
            "SASS sm_80, SASS sm_90",
            "nothing in it runs on sm_75",
            "Fix:",
        ],
    );
    assert!(
        log_lines(&log).is_empty(),
        "decided from the recorded archs, no driver call"
    );

    // Where the build did not record the fatbin's contents, the driver's refusal is the
    // answer, and the PTX is tried next.
    set(&[
        ("FBRT_STANDIN_SM", "90"),
        ("FBRT_STANDIN_LOAD", "209"),
        ("FBRT_STANDIN_LOG", log.to_str().unwrap()),
    ]);
    let e = ctx.load_with(&UNRECORDED, &opts).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoImageForGpu, "{e}");
    assert_eq!(e.code(), Some(209));
    assert!(e.message().contains("CUDA_ERROR_NO_BINARY_FOR_GPU"), "{e}");
    assert!(e.message().contains("PTX `a`"), "{e}");
    assert_eq!(log_lines(&log), ["fatbin", "ptx"]);

    // A load that succeeds takes the first image that fits, and reports it.
    set(&[("FBRT_STANDIN_SM", "86")]);
    let ctx = Context::with_driver(Driver::open(lib).unwrap(), 0).unwrap();
    let m = ctx.load_with(&AOT_ONLY, &opts).unwrap();
    assert_eq!(m.report().from, LoadedFrom::Fatbin);
    assert!(m.report().skipped.is_empty());
    let e = m.function("missing").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::KernelNotFound);
    assert!(
        e.message().contains("has no kernel `missing`; it has: k"),
        "{e}"
    );
    set(&[]);
}

#[test]
fn nvrtc_output_is_cached_and_a_corrupt_entry_is_compiled_again() {
    let _g = lock();
    let Some(lib) = standin() else { return };
    let Some(nv) = nvrtc() else { return };
    let (ctx, cache, log) = gpu(lib, "nvrtc", "90");
    let opts = LoadOptions {
        cache: Some(&cache),
        nvrtc: Some(nv),
    };

    let m = ctx.load_with(&SOURCES_ONLY, &opts).unwrap();
    assert_eq!(m.report().from, LoadedFrom::Nvrtc, "{:?}", m.report());
    let m = ctx.load_with(&SOURCES_ONLY, &opts).unwrap();
    assert_eq!(m.report().from, LoadedFrom::NvrtcCache);
    assert_eq!(m.report().cache_note, "");
    // NVRTC 13 writes a CUBIN for sm_90: the driver was handed ELF both times.
    assert_eq!(log_lines(&log), ["elf", "elf"]);

    // Damage the entry: the next load notices, removes it, compiles again.
    let entries: Vec<PathBuf> = std::fs::read_dir(cache.dir().unwrap())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "fbk"))
        .collect();
    assert_eq!(entries.len(), 1);
    let mut bytes = std::fs::read(&entries[0]).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&entries[0], bytes).unwrap();
    let m = ctx.load_with(&SOURCES_ONLY, &opts).unwrap();
    assert_eq!(m.report().from, LoadedFrom::Nvrtc);
    let note = &m.report().cache_note;
    assert!(
        note.contains("removed the invalid cache entry")
            && note.contains("payload checksum mismatch"),
        "{note}"
    );
    assert_eq!(
        ctx.load_with(&SOURCES_ONLY, &opts).unwrap().report().from,
        LoadedFrom::NvrtcCache
    );

    // Several sources: relocatable PTX each, linked by the driver; the link is cached.
    let m = ctx.load_with(&TWO_SOURCES, &opts).unwrap();
    assert_eq!(m.report().from, LoadedFrom::Nvrtc);
    assert_eq!(
        ctx.load_with(&TWO_SOURCES, &opts).unwrap().report().from,
        LoadedFrom::NvrtcCache
    );
    set(&[]);
}

#[test]
fn sources_without_nvrtc_say_nvrtc_is_what_is_missing() {
    let _g = lock();
    let Some(lib) = standin() else { return };
    set(&[]);
    let ctx = Context::with_driver(Driver::open(lib).unwrap(), 0).unwrap();
    let dir = tmp("nonvrtc");
    let cache = KernelCache::at(dir.join("cache"));
    std::env::set_var("FATBUILD_RT_NVRTC_LIB", dir.join("libnvrtc.so.13"));
    let r = ctx.load_with(
        &SOURCES_ONLY,
        &LoadOptions {
            cache: Some(&cache),
            nvrtc: None,
        },
    );
    std::env::remove_var("FATBUILD_RT_NVRTC_LIB");
    let e = r.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoNvrtc, "{e}");
    assert_says(
        &e,
        &[
            "module `sources_only` has no embedded image for this GPU",
            "must be compiled from its sources",
            "libnvrtc.so.13",
            "FATBUILD_RT_NVRTC_LIB",
        ],
    );
}
