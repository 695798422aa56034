//! The modes that embed sources (`nvrtc`): no toolkit touched without images, both images and
//! sources with them, and generated C that a C compiler takes and that holds what was found.

use std::fs;
use std::path::Path;
use std::process::Command;

use super::{fake, Fake};
use crate::builder::Build;
use crate::cache::{test_dir, write_script};
use crate::mode::Mode;
use crate::module::Module;

/// The fake kernels, with a.cu including common.cuh, as an nvrtc build.
fn sources_build(f: &Fake, mode: Mode) -> Build {
    let k = f.dir.join("kernels");
    fs::write(k.join("a.cu"), "#include \"common.cuh\"\n// a\n").unwrap();
    f.build(mode).include(&k).nvcc_flag("--use_fast_math")
}

/// Compiles the generated C with a probe program and runs it: mode, cuda version, the files,
/// each module's blob count, sources and options, one per line.
fn probe(e: &crate::Embedded) -> Option<String> {
    if Command::new("cc").arg("--version").output().is_err() {
        eprintln!("SKIPPED: no C compiler `cc` to compile the generated C");
        return None;
    }
    let dir = e.c_file.as_ref().unwrap().parent().unwrap();
    let main = dir.join("probe.c");
    fs::write(
        &main,
        r#"#include <stdio.h>
#include "k.h"
int main(void) {
    printf("%s %d %zu %s\n", k_mode, k_cuda_version, k_n_files, k_sources_digest);
    for (size_t i = 0; i < k_n_files; i++)
        printf("file %s %zu %d\n", k_files[i].name, k_files[i].size,
               k_files[i].text[k_files[i].size] == 0);
    for (size_t i = 0; i < k_n_modules; i++) {
        const fatbuild_module *m = &k_modules[i];
        printf("module %s %zu", m->name, m->n_blobs);
        for (size_t j = 0; j < m->n_sources; j++) printf(" src=%s", m->sources[j]);
        for (size_t j = 0; j < m->n_options; j++) printf(" opt=%s", m->options[j]);
        printf("\n");
    }
    return 0;
}
"#,
    )
    .unwrap();
    let exe = dir.join("probe");
    let out = Command::new("cc")
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-I"])
        .arg(dir)
        .arg(&main)
        .arg(e.c_file.as_ref().unwrap())
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the generated C does not compile: {err}"
    );
    let out = Command::new(&exe).output().unwrap();
    assert!(out.status.success());
    Some(String::from_utf8(out.stdout).unwrap())
}

#[test]
fn an_nvrtc_build_embeds_sources_and_no_images() {
    let f = fake();
    let mut lines = Vec::new();
    let e = sources_build(&f, Mode::Nvrtc)
        .embed_inner("k", &mut lines)
        .unwrap();
    assert_eq!(f.runs(), 0, "no tool may run");
    assert_eq!((e.cuda_version, e.toolkit_version.as_str()), (0, ""));
    assert!(e.modules.iter().all(|m| m.blobs.is_empty()));
    let names: Vec<&str> = e.files.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["a.cu", "b.cu", "common.cuh"]);
    assert_eq!(e.modules[0].nvrtc_sources, ["a.cu", "b.cu"]);
    assert_eq!(e.modules[1].nvrtc_options, ["-DX=1", "--use_fast_math"]);
    // Every embedded file reruns the build; nothing about a toolkit or the cache is read.
    for file in ["a.cu", "b.cu", "common.cuh"] {
        let p = fs::canonicalize(f.dir.join("kernels").join(file)).unwrap();
        let want = format!("rerun-if-changed={}", p.display());
        assert!(lines.contains(&want), "missing {want}: {lines:#?}");
    }
    for var in [
        "NVCC",
        "CUDA_PATH",
        "NVCC_APPEND_FLAGS",
        "FATBUILD_CACHE_DIR",
    ] {
        assert!(
            !lines.iter().any(|l| l.ends_with(&format!("={var}"))),
            "{var}"
        );
    }
    let m = &e.manifest_json;
    assert!(m.contains("\"mode\":\"nvrtc\""), "{m}");
    assert!(m.contains(&format!("\"sources_digest\":\"{}\"", e.sources_digest)));
    assert!(
        m.contains("\"files\":[{\"name\":\"a.cu\",\"bytes\":27},"),
        "{m}"
    );
    assert!(
        m.contains("\"nvrtc_options\":[\"-DX=1\",\"--use_fast_math\"]"),
        "{m}"
    );
    let Some(out) = probe(&e) else { return };
    let want_head = format!("nvrtc 0 3 {}\nfile a.cu 27 1\n", e.sources_digest);
    assert!(out.starts_with(&want_head), "{out}");
    assert!(
        out.contains("module pair 0 src=a.cu src=b.cu opt=--use_fast_math\n"),
        "{out}"
    );
    assert!(
        out.contains("module solo 0 src=a.cu opt=-DX=1 opt=--use_fast_math\n"),
        "{out}"
    );
    let _ = fs::remove_dir_all(&f.dir);
}

#[test]
fn with_images_both_the_images_and_the_sources_are_embedded() {
    let f = fake();
    for (mode, n_blobs) in [(Mode::JitNvrtc, [2, 1]), (Mode::AotJitNvrtc, [3, 1])] {
        let e = sources_build(&f, mode).embed("k").unwrap();
        assert_eq!(e.cuda_version, 13000);
        let blobs: Vec<usize> = e.modules.iter().map(|m| m.blobs.len()).collect();
        assert_eq!(blobs, n_blobs, "{mode}");
        assert_eq!(e.files.len(), 3, "{mode}");
        assert_eq!(e.modules[1].nvrtc_sources, ["a.cu"]);
        let Some(out) = probe(&e) else { return };
        let head = format!("{} 13000 3 {}\n", mode.as_str(), e.sources_digest);
        assert!(out.starts_with(&head), "{out}");
        assert!(out.contains(&format!("module pair {} src=a.cu src=b.cu", n_blobs[0])));
    }
    // Without sources: no files, no digest, and every module row has empty source fields.
    let e = f.build(Mode::Jit).embed("k").unwrap();
    assert!(e.files.is_empty() && e.sources_digest.is_empty());
    assert!(e
        .manifest_json
        .contains("\"sources_digest\":\"\",\"files\":[]"));
    let c = fs::read_to_string(e.c_file.as_ref().unwrap()).unwrap();
    assert!(
        c.contains("{ \"solo\", fatbuild_m1_blobs, 1, 0, 0, 0, 0 },"),
        "{c}"
    );
    if let Some(out) = probe(&e) {
        assert!(
            out.starts_with("jit 13000 0 \nmodule pair 2\nmodule solo 1\n"),
            "{out}"
        );
    }
    let _ = fs::remove_dir_all(&f.dir);
}

/// Run by `a_sources_only_build_never_looks_for_a_toolkit` in a child process whose
/// environment hides every toolkit: the sources-only build must succeed.
#[test]
#[ignore = "run in a child process by a_sources_only_build_never_looks_for_a_toolkit"]
fn child_sources_only_embed() {
    let Some(dir) = std::env::var_os("FATBUILD_TEST_CHILD_DIR") else {
        return;
    };
    let k = Path::new(&dir).join("kernels");
    let e = Build::new()
        .mode(Mode::Nvrtc)
        .emit_c(true)
        .cargo_metadata(false)
        .out_dir(Path::new(&dir).join("out"))
        .include(&k)
        .module(Module::new("m").source(k.join("a.cu")).define("W", "4"))
        .embed("k")
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(e.files.len(), 2);
    assert_eq!(e.cuda_version, 0);
}

#[test]
fn a_sources_only_build_never_looks_for_a_toolkit() {
    let dir = test_dir("no-toolkit");
    let k = dir.join("kernels");
    fs::create_dir_all(&k).unwrap();
    fs::write(k.join("a.cu"), "#include \"h.cuh\"\n").unwrap();
    fs::write(k.join("h.cuh"), "\n").unwrap();
    // An nvcc that leaves a mark if anything runs it (`--version` included).
    let bin = dir.join("bin");
    fs::create_dir_all(&bin).unwrap();
    let mark = dir.join("probed");
    write_script(
        &bin.join("nvcc"),
        &format!("#!/bin/sh\necho \"$@\" > {}\nexit 1\n", mark.display()),
    );
    let exe = std::env::current_exe().unwrap();
    let nvcc = bin.join("nvcc");
    let hidden: [(&str, &std::ffi::OsStr); 4] = [
        ("NVCC", "/nonexistent/bin/nvcc".as_ref()),
        ("CUDA_PATH", "/nonexistent".as_ref()),
        ("CUDA_HOME", "/nonexistent".as_ref()),
        ("PATH", "".as_ref()),
    ];
    // Every place searched points nowhere; then at an nvcc that marks being run.
    let marked: [(&str, &std::ffi::OsStr); 4] = [
        ("NVCC", nvcc.as_os_str()),
        ("CUDA_PATH", dir.as_os_str()),
        ("CUDA_HOME", dir.as_os_str()),
        ("PATH", bin.as_os_str()),
    ];
    for env in [hidden, marked] {
        let out = Command::new(&exe)
            .args([
                "--exact",
                "builder::tests::sources::child_sources_only_embed",
            ])
            .args(["--ignored", "--nocapture", "--test-threads=1"])
            .envs(env)
            .env("FATBUILD_TEST_CHILD_DIR", &dir)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{env:?}: {text}");
        assert!(
            text.contains("1 passed"),
            "the child test did not run: {text}"
        );
        assert!(
            !mark.exists(),
            "nvcc was run: {:?}",
            fs::read_to_string(&mark)
        );
    }
    let _ = fs::remove_dir_all(&dir);
}
