//! The generated Rust module, for real: the same kernels built in every mode (the toolkit's
//! modes skipped, with a note, where there is no CUDA toolkit), each module `include!`d by a
//! small crate that depends on fatbuild-rt (`default-features = false`: the types alone), built
//! with cargo and run; what it prints of every module (kernels, images with their kind, label,
//! length, hash, alignment and fatbin contents, sources, options) must be what `embed`
//! returned and what the cache holds.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use fatbuild::{BlobKind, Build, Embedded, Mode, Module, Toolkit};

mod common;

/// The runtime crate beside this one (absent in a packaged fatbuild: the test then skips).
fn runtime_crate() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fatbuild-rt");
    p.join("Cargo.toml")
        .exists()
        .then(|| p.canonicalize().unwrap())
}

/// A fresh directory with the test kernels.
fn workdir() -> PathBuf {
    common::kernel_dir(
        "rust-module",
        &[
            ("common.cuh", "#define SCALE 2.0f\n"),
            (
                "saxpy.cu",
                "#include \"common.cuh\"\n\
                 extern \"C\" __global__ void saxpy(float a, const float *x, float *y, int n) {\n\
                 int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
                 if (i < n) y[i] = SCALE * a * x[i] + y[i];\n}\n",
            ),
            (
                "a.cu",
                "extern __device__ float helper(float x);\n\
                 extern \"C\" __global__ void twice(float *p) { p[0] = helper(p[1]); }\n",
            ),
            (
                "b.cu",
                "__device__ float helper(float x) { return x + W; }\n\
                 extern \"C\" __global__ void plus_w(float *p) { p[0] = helper(p[1]); }\n",
            ),
        ],
    )
}

fn build(dir: &Path, mode: Mode, tk: Option<&Toolkit>) -> Embedded {
    let k = dir.join("kernels");
    let tag = mode.as_str().replace('+', "_");
    let mut b = Build::new()
        .mode(mode)
        .archs("80;90")
        .include(&k)
        .cargo_metadata(false)
        .out_dir(dir.join(format!("out-{tag}")))
        .cache_dir(dir.join("cache"))
        .module(
            Module::new("saxpy")
                .source(k.join("saxpy.cu"))
                .kernel("saxpy"),
        )
        .module(
            Module::new("pair")
                .source(k.join("a.cu"))
                .source(k.join("b.cu"))
                .define("W", "3.0f")
                .kernel("twice"),
        );
    if let Some(tk) = tk {
        b = b.toolkit(tk.clone());
    }
    b.embed(&format!("k_{tag}"))
        .unwrap_or_else(|e| panic!("{e}"))
}

fn fnv(b: &[u8]) -> u32 {
    b.iter()
        .fold(2166136261u32, |h, &x| (h ^ x as u32).wrapping_mul(16777619))
}

/// What the probe must print for `e`.
fn expected(e: &Embedded) -> String {
    let mut s = String::new();
    let archs: Vec<String> = e.archs.iter().map(u32::to_string).collect();
    let _ = writeln!(
        s,
        "EMBED {} {} [{}] {} {} {} {} {} files={} manifest={}",
        e.name,
        e.mode.as_str(),
        archs.join(","),
        e.ptx_arch,
        e.toolkit_version,
        e.cuda_version,
        e.hash,
        e.sources_digest,
        e.files.len(),
        e.manifest_json.len()
    );
    for m in &e.modules {
        let _ = writeln!(
            s,
            "MODULE {} kernels={} sources={} options={}",
            m.name,
            m.kernels.join(","),
            m.nvrtc_sources.join(","),
            m.nvrtc_options.join(" ")
        );
        for b in &m.blobs {
            let data = fs::read(&b.path).unwrap();
            let entries: Vec<String> = b
                .images
                .iter()
                .map(|i| {
                    i.replace("elf sm_", "SASS sm_")
                        .replace("ptx sm_", "PTX compute_")
                })
                .collect();
            let _ = writeln!(
                s,
                "IMAGE {} {} {} {} aligned=true [{}]",
                if b.kind == BlobKind::Fatbin {
                    "fatbin"
                } else {
                    "ptx"
                },
                b.label,
                b.bytes,
                fnv(&data[..b.bytes]),
                entries.join(", ")
            );
        }
    }
    s
}

const PROBE_MAIN: &str = r#"
fn fnv(b: &[u8]) -> u32 {
    b.iter().fold(2166136261u32, |h, &x| (h ^ x as u32).wrapping_mul(16777619))
}

fn show(e: &fatbuild_rt::Embed) {
    let archs: Vec<String> = e.archs().iter().map(u32::to_string).collect();
    assert!(e.manifest().starts_with("{\"name\":"));
    println!(
        "EMBED {} {} [{}] {} {} {} {} {} files={} manifest={}",
        e.name(), e.mode(), archs.join(","), e.ptx_arch(), e.toolkit(), e.cuda_version(),
        e.hash(), e.sources_digest(), e.files().len(), e.manifest().len()
    );
    for m in e.modules() {
        assert!(std::ptr::eq(e.module(m.name()).unwrap(), *m));
        for s in m.sources() {
            assert!(e.files().iter().any(|f| f.name() == *s), "source {s} in the files");
        }
        println!(
            "MODULE {} kernels={} sources={} options={}",
            m.name(), m.kernels().join(","), m.sources().join(","), m.nvrtc_options().join(" ")
        );
        for i in m.images() {
            let entries: Vec<String> = i.fatbin_entries().iter().map(|x| x.to_string()).collect();
            if let Some(p) = i.ptx_with_nul() {
                assert_eq!(p.len(), i.bytes().len() + 1);
                assert!(i.ptx_text().unwrap().contains(".entry"));
            }
            println!(
                "IMAGE {} {} {} {} aligned={} [{}]",
                i.kind(), i.label(), i.bytes().len(), fnv(i.bytes()),
                i.bytes().as_ptr() as usize % 8 == 0, entries.join(", ")
            );
        }
    }
    for f in e.files() {
        assert!(!f.bytes().is_empty() && f.text().is_some());
    }
}
"#;

#[test]
fn the_generated_module_compiles_and_describes_the_build_in_every_mode() {
    let Some(rt) = runtime_crate() else {
        eprintln!("SKIPPED: no fatbuild-rt beside this crate (a packaged fatbuild)");
        return;
    };
    let tk = match Toolkit::find() {
        Ok(t) => Some(t),
        Err(e) => {
            eprintln!("note: no CUDA toolkit, only the nvrtc mode is built:\n{e}");
            None
        }
    };
    let dir = workdir();
    let modes: &[Mode] = if tk.is_some() {
        &[
            Mode::Jit,
            Mode::Aot,
            Mode::AotJit,
            Mode::Nvrtc,
            Mode::AotJitNvrtc,
        ]
    } else {
        &[Mode::Nvrtc]
    };
    let embeds: Vec<Embedded> = modes.iter().map(|&m| build(&dir, m, tk.as_ref())).collect();

    // A crate using them as a user's crate would.
    let probe = dir.join("probe");
    fs::create_dir_all(probe.join("src")).unwrap();
    fs::write(
        probe.join("Cargo.toml"),
        format!(
            "[package]\nname = \"probe\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\
             [dependencies]\nfatbuild-rt = {{ path = {:?}, default-features = false }}\n[workspace]\n",
            rt.display().to_string()
        ),
    )
    .unwrap();
    let mut main = String::from(PROBE_MAIN);
    let mut calls = String::new();
    for e in &embeds {
        let rs = e.rs_file.as_ref().expect("a Rust module by default");
        let _ = writeln!(
            main,
            "mod {} {{ include!({:?}); }}",
            e.name,
            rs.display().to_string()
        );
        let _ = writeln!(calls, "    show(&{}::EMBED);", e.name);
        if e.mode == Mode::Jit {
            // The per-module statics are the modules of MODULES, in order.
            let _ = writeln!(
                calls,
                "    assert!(std::ptr::eq({n}::MODULES[0], &{n}::SAXPY) && std::ptr::eq({n}::MODULES[1], &{n}::PAIR));",
                n = e.name
            );
        }
    }
    let _ = write!(main, "fn main() {{\n{calls}}}\n");
    fs::write(probe.join("src/main.rs"), main).unwrap();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args(["run", "--quiet", "--offline", "--manifest-path"])
        .arg(probe.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the probe crate failed: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let want: String = embeds.iter().map(expected).collect();
    assert_eq!(stdout, want);

    // What each mode must hold, spelled out once more.
    for e in &embeds {
        let saxpy = &e.modules[0];
        let kinds: Vec<BlobKind> = saxpy.blobs.iter().map(|b| b.kind).collect();
        match e.mode {
            Mode::Jit => assert_eq!(kinds, [BlobKind::Ptx]),
            Mode::Aot => {
                assert_eq!(kinds, [BlobKind::Fatbin]);
                assert_eq!(saxpy.blobs[0].images, ["elf sm_80", "elf sm_90"]);
            }
            Mode::AotJit | Mode::AotJitNvrtc => {
                assert_eq!(kinds, [BlobKind::Fatbin]);
                assert_eq!(
                    saxpy.blobs[0].images,
                    ["elf sm_80", "elf sm_90", "ptx sm_75"]
                );
            }
            Mode::Nvrtc => assert!(kinds.is_empty()),
            _ => unreachable!(),
        }
        assert_eq!(saxpy.kernels, ["saxpy"], "{}", e.mode);
        let pair_kernels = &e.modules[1].kernels;
        if e.mode == Mode::Nvrtc {
            assert_eq!(pair_kernels, &["twice"], "declared");
            assert_eq!(e.modules[1].nvrtc_sources, ["a.cu", "b.cu"]);
            assert_eq!(e.modules[1].nvrtc_options, ["-DW=3.0f"]);
        } else {
            assert_eq!(pair_kernels, &["twice", "plus_w"], "from the PTX");
        }
        if e.mode.sources() {
            assert_eq!(e.files.len(), 4, "common.cuh, a.cu, b.cu, saxpy.cu");
        }
    }
    let _ = fs::remove_dir_all(&dir);
}
