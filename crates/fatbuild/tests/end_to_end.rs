//! The real toolchain: a two-file module and a one-file module built in every mode, the
//! generated C compiled and read back, fatbins parsed. Skipped (with a note) without CUDA.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use fatbuild::{fatbin, BlobKind, Build, Embedded, ErrorKind, Mode, Module, Toolkit};

mod common;

fn toolkit() -> Option<Toolkit> {
    match Toolkit::find() {
        Ok(t) => Some(t),
        Err(e) => {
            eprintln!("note: skipping, no CUDA toolkit here:\n{e}");
            None
        }
    }
}

/// A fresh directory with the test kernels.
fn workdir(name: &str) -> PathBuf {
    common::kernel_dir(
        &format!("fatbuild-{name}"),
        &[
            ("common.cuh", "#define SCALE 2.0f\n"),
            (
                "a.cu",
                "#include \"common.cuh\"\n\
                 extern __device__ float helper(float x);\n\
                 extern \"C\" __global__ void twice(float *p, int n) {\n\
                 int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
                 if (i < n) p[i] = SCALE * helper(p[i]);\n}\n",
            ),
            (
                "b.cu",
                "__device__ float helper(float x) { return x + WF_W; }\n\
                 extern \"C\" __global__ void plus_w(float *p) { p[0] = helper(p[1]); }\n",
            ),
            (
                "solo.cu",
                "extern \"C\" __global__ void solo_k(float *p) { p[threadIdx.x] = WF_W; }\n",
            ),
        ],
    )
}

fn build(dir: &Path, tk: &Toolkit, mode: Mode) -> Build {
    let k = dir.join("kernels");
    Build::new()
        .mode(mode)
        .emit_c(true)
        .archs("sm_90;80")
        .toolkit(tk.clone())
        .include(&k)
        .cargo_metadata(false)
        .out_dir(dir.join(format!("out-{}", mode.as_str().replace('+', "_"))))
        .cache_dir(dir.join("cache"))
        .module(
            Module::new("pair")
                .source(k.join("a.cu"))
                .source(k.join("b.cu"))
                .define("WF_W", "3"),
        )
        .module(
            Module::new("solo")
                .source(k.join("solo.cu"))
                .define("WF_W", "6"),
        )
}

fn images(path: &Path) -> Vec<String> {
    let data = fs::read(path).unwrap();
    fatbin::parse(&data)
        .unwrap()
        .iter()
        .map(|i| i.describe())
        .collect()
}

/// Compiles the generated C strictly, links it with a harness that prints every blob's
/// module, label, kind, size, FNV-1a hash and terminating byte, and compares with the files.
fn check_c(e: &Embedded, dir: &Path) {
    let obj = e.c_file.as_ref().unwrap().with_extension("o");
    let strict = [
        "-std=c99",
        "-Wall",
        "-Wextra",
        "-Werror",
        "-pedantic",
        "-O1",
    ];
    let st = Command::new("cc")
        .args(strict)
        .arg("-c")
        .arg(e.c_file.as_ref().unwrap())
        .arg("-o")
        .arg(&obj)
        .status()
        .unwrap();
    assert!(
        st.success(),
        "cc -c {} failed",
        e.c_file.as_ref().unwrap().display()
    );
    let main = dir.join(format!("main_{}.c", e.name));
    fs::write(
        &main,
        format!(
            "#include <stdio.h>\n#include <stdint.h>\n#include \"{n}.h\"\n\
             int main(void) {{\n\
               size_t m, b, i;\n\
               printf(\"%s %d %d\\n\", {n}_mode, {n}_cuda_version, {n}_manifest[0]);\n\
               for (m = 0; m < {n}_n_modules; m++)\n\
                 for (b = 0; b < {n}_modules[m].n_blobs; b++) {{\n\
                   const fatbuild_blob *x = &{n}_modules[m].blobs[b];\n\
                   uint32_t h = 2166136261u;\n\
                   for (i = 0; i < x->size; i++) h = (h ^ x->data[i]) * 16777619u;\n\
                   printf(\"%s %s %d %zu %u %d %d\\n\", {n}_modules[m].name, x->label, x->kind,\n\
                          x->size, (unsigned)h, (int)((uintptr_t)x->data % 8), x->data[x->size]);\n\
                 }}\n\
               return 0;\n}}\n",
            n = e.name
        ),
    )
    .unwrap();
    let exe = dir.join(format!("main_{}", e.name));
    let st = Command::new("cc")
        .args(strict)
        .arg("-I")
        .arg(e.h_file.as_ref().unwrap().parent().unwrap())
        .arg(&main)
        .arg(&obj)
        .arg("-o")
        .arg(&exe)
        .status()
        .unwrap();
    assert!(st.success(), "linking the harness failed");
    let out = Command::new(&exe).output().unwrap();
    let got = String::from_utf8(out.stdout).unwrap();
    let mut want = format!("{} {} {}\n", e.mode.as_str(), e.cuda_version, b'{');
    for m in &e.modules {
        for b in &m.blobs {
            let data = fs::read(&b.path).unwrap();
            let h = data
                .iter()
                .fold(2166136261u32, |h, &x| (h ^ x as u32).wrapping_mul(16777619));
            let kind = if b.kind == BlobKind::Ptx { 1 } else { 2 };
            want += &format!("{} {} {kind} {} {h} 0 0\n", m.name, b.label, data.len());
        }
    }
    assert_eq!(got, want);
}

#[test]
fn every_mode_builds_embeds_and_caches() {
    let Some(tk) = toolkit() else { return };
    let dir = workdir("modes");

    // JIT: PTX only, one blob per source.
    let e = build(&dir, &tk, Mode::Jit).embed("wk_jit").unwrap();
    let s = e.stats;
    assert_eq!((s.nvcc, s.ptxas, s.nvlink, s.fatbinary), (3, 0, 0, 0));
    assert!(e.archs.is_empty());
    assert_eq!(e.modules[0].kernels, ["twice", "plus_w"]);
    assert_eq!(e.modules[1].kernels, ["solo_k"]);
    let labels: Vec<_> = e.modules[0]
        .blobs
        .iter()
        .map(|b| (b.kind, b.label.as_str()))
        .collect();
    assert_eq!(labels, [(BlobKind::Ptx, "a"), (BlobKind::Ptx, "b")]);
    assert_eq!(e.cuda_version, tk.cuda_version());
    check_c(&e, &dir);

    // AOT: the PTX comes from the cache; one fatbin per module with ELF sm_80 + sm_90.
    let e = build(&dir, &tk, Mode::Aot).embed("wk_aot").unwrap();
    let s = e.stats;
    assert_eq!((s.nvcc, s.ptxas, s.nvlink, s.fatbinary), (0, 6, 4, 2));
    assert_eq!(e.archs, [80, 90]);
    for m in &e.modules {
        assert_eq!(m.blobs.len(), 1);
        assert_eq!(m.blobs[0].kind, BlobKind::Fatbin);
        assert_eq!(images(&m.blobs[0].path), ["elf sm_80", "elf sm_90"]);
    }
    assert_eq!(e.modules[0].kernels, ["twice", "plus_w"]);
    check_c(&e, &dir);

    // AOT+JIT: only the single-source fatbin changes (it gains the PTX); the two-source
    // module keeps the AOT fatbin (a cache hit) and adds its PTX as separate blobs.
    let e = build(&dir, &tk, Mode::AotJit).embed("wk_both").unwrap();
    let s = e.stats;
    assert_eq!((s.nvcc, s.ptxas, s.nvlink, s.fatbinary), (0, 0, 0, 1));
    let pair: Vec<_> = e.modules[0]
        .blobs
        .iter()
        .map(|b| (b.kind, b.label.as_str()))
        .collect();
    assert_eq!(
        pair,
        [
            (BlobKind::Fatbin, "fatbin"),
            (BlobKind::Ptx, "a"),
            (BlobKind::Ptx, "b")
        ]
    );
    assert_eq!(
        images(&e.modules[0].blobs[0].path),
        ["elf sm_80", "elf sm_90"]
    );
    assert_eq!(e.modules[1].blobs.len(), 1);
    assert_eq!(
        images(&e.modules[1].blobs[0].path),
        ["elf sm_80", "elf sm_90", "ptx sm_75"]
    );
    assert_eq!(
        e.modules[1].blobs[0].images,
        ["elf sm_80", "elf sm_90", "ptx sm_75"]
    );
    check_c(&e, &dir);
    let j = &e.manifest_json;
    for want in [
        "{\"name\":\"wk_both\",\"mode\":\"aot+jit\",\"archs\":[80,90],\"ptx_arch\":\"compute_75\"",
        &format!("\"toolkit\":\"{}\"", tk.version()),
        &format!("\"hash\":\"{}\"", e.hash),
        "\"defines\":{\"WF_W\":\"3\"},\"kernels\":[\"twice\",\"plus_w\"]",
        "{\"kind\":\"fatbin\",\"label\":\"fatbin\",\"bytes\":",
        "\"images\":[\"elf sm_80\",\"elf sm_90\",\"ptx sm_75\"]",
        "{\"kind\":\"ptx\",\"label\":\"b\",\"bytes\":",
    ] {
        assert!(j.contains(want), "manifest lacks {want}:\n{j}");
    }

    // Everything again: nothing runs, and the output is identical.
    let c1 = fs::read(e.c_file.as_ref().unwrap()).unwrap();
    let e2 = build(&dir, &tk, Mode::AotJit).embed("wk_both").unwrap();
    assert_eq!(e2.stats.tools_run(), 0);
    assert_eq!(fs::read(e2.c_file.as_ref().unwrap()).unwrap(), c1);
    assert_eq!(e2.hash, e.hash);

    // Editing a header recompiles only the source that includes it (a.cu), and what its new
    // PTX feeds: the pair module's ptxas (a.cu x 2 archs), nvlink (x 2) and fatbinary.
    fs::write(dir.join("kernels/common.cuh"), "#define SCALE 4.0f\n").unwrap();
    let e3 = build(&dir, &tk, Mode::AotJit).embed("wk_both").unwrap();
    let s = e3.stats;
    assert_eq!((s.nvcc, s.ptxas, s.nvlink, s.fatbinary), (1, 2, 2, 1));
    assert_ne!(e3.hash, e2.hash);
    // A header edit that leaves the PTX as it was reruns nvcc only.
    fs::write(
        dir.join("kernels/common.cuh"),
        "#define SCALE 4.0f /* same */\n",
    )
    .unwrap();
    let e4 = build(&dir, &tk, Mode::AotJit).embed("wk_both").unwrap();
    assert_eq!((e4.stats.nvcc, e4.stats.tools_run()), (1, 1));
    assert_eq!(e4.hash, e3.hash);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn a_compile_error_names_the_file_command_and_fix() {
    let Some(tk) = toolkit() else { return };
    let dir = workdir("broken");
    fs::write(
        dir.join("kernels/b.cu"),
        "__device__ float helper(float x) { return y; }\n",
    )
    .unwrap();
    let err = build(&dir, &tk, Mode::Jit).embed("wk").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ToolFailed);
    let msg = err.to_string();
    eprintln!("{msg}");
    for want in [
        "nvcc failed building PTX of",
        "b.cu",
        "exit status",
        "command: ",
        "identifier \"y\" is undefined",
        "fix:",
    ] {
        assert!(msg.contains(want), "missing `{want}`:\n{msg}");
    }
    // A module missing the file that defines a called function fails at nvlink.
    let k = dir.join("kernels");
    fs::write(
        k.join("b.cu"),
        "__device__ float helper(float x) { return x; }\n",
    )
    .unwrap();
    let err = build(&dir, &tk, Mode::Aot)
        .module(Module::new("half").source(k.join("a.cu")))
        .embed("wk")
        .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("nvlink failed building the sm_80 link of module `half`"),
        "{msg}"
    );
    assert!(msg.contains("Undefined reference"), "{msg}");
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn fatbin_parser_matches_real_fatbinary_output() {
    let Some(tk) = toolkit() else { return };
    let dir = workdir("fatbin");
    let e = build(&dir, &tk, Mode::AotJit).embed("wk").unwrap();
    // Reuse the cubins and PTX of the solo module straight from the cache.
    let cache = &e.cache_dir;
    let find = |prefix: &str, ext: &str| {
        fs::read_dir(cache)
            .unwrap()
            .map(|d| d.unwrap().path())
            .find(|p| {
                let n = p.file_name().unwrap().to_string_lossy();
                n.starts_with(prefix) && n.ends_with(ext)
            })
            .unwrap()
    };
    let (c80, c90, ptx) = (
        find("solo.sm_80.", ".cubin"),
        find("solo.sm_90.", ".cubin"),
        find("solo.", ".ptx"),
    );
    let ptx_text = fs::read(&ptx).unwrap();
    let cases: Vec<(Vec<String>, Vec<&str>)> = vec![
        (
            vec![format!("kind=elf,sm=80,file={}", c80.display())],
            vec!["elf sm_80"],
        ),
        (
            vec![
                format!("kind=elf,sm=90,file={}", c90.display()),
                format!("kind=ptx,sm=75,file={}", ptx.display()),
            ],
            vec!["elf sm_90", "ptx sm_75"],
        ),
        (
            vec![
                format!("kind=elf,sm=80,file={}", c80.display()),
                format!("kind=elf,sm=90,file={}", c90.display()),
                format!("kind=ptx,sm=75,file={}", ptx.display()),
            ],
            vec!["elf sm_80", "elf sm_90", "ptx sm_75"],
        ),
    ];
    for (i, (specs, want)) in cases.iter().enumerate() {
        for compress in [true, false] {
            let out = dir.join(format!("t{i}{compress}.fatbin"));
            let mut cmd = Command::new(tk.tool("fatbinary"));
            cmd.arg("--64")
                .arg(format!("--compress={compress}"))
                .arg(format!("--create={}", out.display()));
            for s in specs {
                cmd.arg(format!("--image3={s}"));
            }
            assert!(cmd.status().unwrap().success());
            let data = fs::read(&out).unwrap();
            let imgs = fatbin::parse(&data).unwrap();
            let got: Vec<String> = imgs.iter().map(|i| i.describe()).collect();
            assert_eq!(got, *want);
            for img in &imgs {
                let payload = img.data(&data).unwrap();
                match img.kind {
                    fatbin::ImageKind::Elf => {
                        assert!(!img.compressed);
                        assert_eq!(&payload[..4], b"\x7fELF");
                        let file = if img.sm == 80 { &c80 } else { &c90 };
                        assert_eq!(payload, fs::read(file).unwrap());
                    }
                    fatbin::ImageKind::Ptx if compress => {
                        assert!(img.compressed);
                        assert_eq!(&payload[..4], b"\x28\xb5\x2f\xfd", "zstd frame");
                        assert!(img.uncompressed_size > img.size as u64);
                    }
                    fatbin::ImageKind::Ptx => {
                        assert!(!img.compressed);
                        assert_eq!(img.version, (9, 0).max(img.version));
                        let text = String::from_utf8_lossy(payload);
                        assert!(text.contains(".entry solo_k"), "{text}");
                        assert!(ptx_text.len() >= text.trim_end_matches('\0').len());
                    }
                    fatbin::ImageKind::Other(k) => panic!("unexpected kind {k}"),
                }
            }
            // Every truncation is an error, never a panic.
            for cut in 0..data.len() {
                assert!(fatbin::parse(&data[..cut]).is_err(), "cut {cut}");
            }
        }
    }
    let _ = fs::remove_dir_all(&dir);
}

/// Damages a cache file in place (a fresh inode: hard links elsewhere keep their contents).
fn tamper(path: &Path, f: impl FnOnce(&mut Vec<u8>)) {
    let mut data = fs::read(path).unwrap();
    f(&mut data);
    fs::remove_file(path).unwrap();
    fs::write(path, data).unwrap();
}

/// The cache outputs named `<prefix><key><ext>`.
fn cache_files(cache: &Path, prefix: &str, ext: &str) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = fs::read_dir(cache)
        .unwrap()
        .map(|d| d.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.starts_with(prefix)
                && n.ends_with(ext)
                && !n[prefix.len()..n.len() - ext.len()].contains('.')
        })
        .collect();
    found.sort();
    found
}

fn cache_file(cache: &Path, prefix: &str, ext: &str) -> PathBuf {
    let mut found = cache_files(cache, prefix, ext);
    assert_eq!(found.len(), 1, "{prefix}*{ext} in {}", cache.display());
    found.pop().unwrap()
}

#[test]
fn corrupt_cache_entries_are_rebuilt_not_embedded() {
    let Some(tk) = toolkit() else { return };
    let dir = workdir("corrupt");
    let cache = dir.join("cache");
    // Clean builds: the references.
    let both = build(&dir, &tk, Mode::AotJit).embed("wk").unwrap();
    let want_both = fs::read(both.c_file.as_ref().unwrap()).unwrap();
    let aot = build(&dir, &tk, Mode::Aot).embed("wk").unwrap();
    let want_aot = fs::read(aot.c_file.as_ref().unwrap()).unwrap();
    let solo_aot_fatbin = aot.modules[1].blobs[0].path.clone();

    // A truncated PTX (the manifest once lost kernels this way), a zero-length PTX (a crash
    // after an unsynced rename), a fatbin with one flipped payload byte and a truncated one
    // (which used to fail every build with "fatbinary wrote ... that does not parse").
    let a_ptx = cache_file(&cache, "a.", ".ptx");
    let b_ptx = cache_file(&cache, "b.", ".ptx");
    tamper(&a_ptx, |d| d.truncate(d.len() / 2));
    tamper(&b_ptx, |d| d.clear());
    let solo_fatbin = both.modules[1].blobs[0].path.clone();
    tamper(&solo_fatbin, |d| {
        let n = d.len();
        d[n - 100] ^= 0x40
    });
    let pair_fatbin = both.modules[0].blobs[0].path.clone();
    tamper(&pair_fatbin, |d| d.truncate(d.len() - 1));
    let e = build(&dir, &tk, Mode::AotJit).embed("wk").unwrap();
    let warnings = &e.warnings;
    let s = e.stats;
    // Both PTX rebuilt (same contents, so nothing downstream of them reruns), the fatbins
    // repacked.
    assert_eq!((s.nvcc, s.ptxas, s.nvlink, s.fatbinary), (2, 0, 0, 2));
    assert_eq!(fs::read(e.c_file.as_ref().unwrap()).unwrap(), want_both);
    assert_eq!(e.hash, both.hash);
    for p in [&a_ptx, &b_ptx, &solo_fatbin, &pair_fatbin] {
        let name = p.display().to_string();
        let n = warnings.iter().filter(|w| w.contains(&name)).count();
        assert_eq!(n, 1, "one warning names {name}: {warnings:#?}");
    }
    assert_eq!(warnings.len(), 4, "{warnings:#?}");

    // Truncated cubins (ptxas's and nvlink's sm_80 code of `solo`) are not packed into a
    // fatbin that needs repacking (here: deleted): they are rebuilt first.
    let cubins = cache_files(&cache, "solo.sm_80.", ".cubin");
    assert_eq!(cubins.len(), 2, "{cubins:?}");
    for c in &cubins {
        tamper(c, |d| d.truncate(d.len() - 64));
    }
    fs::remove_file(&solo_aot_fatbin).unwrap();
    let e = build(&dir, &tk, Mode::Aot).embed("wk").unwrap();
    let s = e.stats;
    assert_eq!((s.nvcc, s.ptxas, s.nvlink, s.fatbinary), (0, 1, 1, 1));
    assert_eq!(fs::read(e.c_file.as_ref().unwrap()).unwrap(), want_aot);
    assert_eq!(e.warnings.len(), 2, "{:#?}", e.warnings);
    for c in &cubins {
        let name = c.display().to_string();
        assert!(e.warnings.iter().any(|w| w.contains(&name)), "{name}");
    }

    // Nothing left to repair.
    let e = build(&dir, &tk, Mode::AotJit).embed("wk").unwrap();
    assert_eq!(e.stats.tools_run(), 0);
    assert_eq!(fs::read(e.c_file.as_ref().unwrap()).unwrap(), want_both);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn shell_syntax_never_reaches_nvcc() {
    let Some(tk) = toolkit() else { return };
    let dir = workdir("inject");
    // nvcc would run this through `sh -c` (it did, before fatbuild refused it).
    let marker = dir.join("pwned");
    let flag = format!("-DX=$(touch {})", marker.display());
    let err = build(&dir, &tk, Mode::Jit).nvcc_flag(&flag).embed("wk");
    let msg = err.unwrap_err().to_string();
    assert!(
        msg.contains(&format!("nvcc flag `{flag}` (from Build::nvcc_flag)")),
        "{msg}"
    );
    assert!(!marker.exists(), "the injected command ran");
    // A cache path with `$HOME` in it used to break the build with a confusing nvcc error.
    let cache = dir.join("$HOME");
    let err = build(&dir, &tk, Mode::Jit).cache_dir(&cache).embed("wk");
    let msg = err.unwrap_err().to_string();
    assert!(
        msg.contains(&format!("cache directory {}", cache.display())),
        "{msg}"
    );
    assert!(!cache.exists());
    let _ = fs::remove_dir_all(&dir);
}
