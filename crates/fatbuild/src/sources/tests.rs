//! The source scanner, file naming, NVRTC options and the digest, on files in a temp dir.

use std::fs;
use std::path::{Path, PathBuf};

use super::*;
use crate::cache::test_dir;

fn spec(name: &str, sources: &[&Path], defines: &[(&str, &str)]) -> ModuleSpec {
    ModuleSpec {
        name: name.into(),
        sources: sources
            .iter()
            .map(|p| (p.to_path_buf(), p.display().to_string()))
            .collect(),
        defines: defines
            .iter()
            .map(|(k, v)| (k.to_string(), Some(v.to_string())))
            .collect(),
        flags: vec![],
    }
}

/// kernels/{a.cu, b.cu, common.cuh, sub/deep.cuh, sub/leaf.cuh, unused.cuh}: a.cu includes
/// common.cuh and sub/deep.cuh, which includes sub/leaf.cuh; b.cu includes common.cuh.
fn tree() -> (PathBuf, PathBuf) {
    let dir = test_dir("sources");
    let k = dir.join("kernels");
    fs::create_dir_all(k.join("sub")).unwrap();
    let files = [
        (
            "a.cu",
            "#include \"common.cuh\"\n// #include \"commented.cuh\"\n/* #include \"block.cuh\"\n\
             */ #include <cuda_fp16.h>\n  #  include \"sub/deep.cuh\" // trailing\n",
        ),
        ("b.cu", "#include \"common.cuh\"\n__global__ void b() {}\n"),
        ("common.cuh", "#pragma once\n#define ONE 1\n"),
        ("sub/deep.cuh", "#pragma once\n#include \"sub/leaf.cuh\"\n"),
        ("sub/leaf.cuh", "#pragma once\nint leaf;\n"),
        ("unused.cuh", "int unused;\n"),
    ];
    for (name, text) in files {
        fs::write(k.join(name), text).unwrap();
    }
    (dir, k)
}

fn names(s: &Sources) -> Vec<&str> {
    s.files.iter().map(|f| f.name.as_str()).collect()
}

#[test]
fn quoted_includes_skip_comments_angles_and_strings() {
    let text = b"#include \"a.h\"\n\
        // #include \"line_comment.h\"\n\
        /* #include \"block.h\"\n\
        #include \"still_block.h\" */ #include \"after_block.h\"\n\
        #include <angle.h>\n\
        const char *s = \"/*\"; #include \"not_a_directive.h\"\n\
        # \\\n  include \\\n \"continued.h\"\n\
        #include_next \"next.h\"\n\
        #define X \"#include \\\"in_string.h\\\"\"\n\
        \t#  include\"tight.h\"\r\n\
        #include MACRO\n\
        #include \"\"\n";
    let got = quoted_includes(text);
    // A block comment spanning lines is white space with a newline: a directive may follow it.
    let want = [
        (1, "a.h"),
        (4, "after_block.h"),
        (7, "continued.h"),
        (12, "tight.h"),
    ];
    let want: Vec<(usize, String)> = want.iter().map(|(l, n)| (*l, n.to_string())).collect();
    assert_eq!(got, want);
    // A block comment that opened on the line of a directive hides nothing before it.
    assert_eq!(
        quoted_includes(b"#include \"x.h\" /* open\n#include \"y.h\"\n*/\n"),
        [(1, "x.h".to_string())]
    );
}

#[test]
fn sources_and_headers_are_found_transitively() {
    let (_dir, k) = tree();
    let specs = [
        spec("ma", &[&k.join("a.cu")], &[("WF_W", "7")]),
        spec("mb", &[&k.join("b.cu"), &k.join("a.cu")], &[]),
    ];
    let mut cargo = Vec::new();
    let s = collect(&specs, std::slice::from_ref(&k), &[], &mut cargo).unwrap();
    // Sorted by name; unused.cuh is not embedded; each file once.
    assert_eq!(
        names(&s),
        ["a.cu", "b.cu", "common.cuh", "sub/deep.cuh", "sub/leaf.cuh"]
    );
    assert_eq!(s.modules[0], (vec!["a.cu".into()], vec!["-DWF_W=7".into()]));
    assert_eq!(s.modules[1].0, ["b.cu", "a.cu"]);
    let leaf = &s.files[4];
    assert_eq!(leaf.text, b"#pragma once\nint leaf;\n");
    assert_eq!(leaf.path, fs::canonicalize(k.join("sub/leaf.cuh")).unwrap());
    // One rerun line per embedded file.
    let reruns: Vec<&String> = cargo
        .iter()
        .filter(|l| l.starts_with("rerun-if-changed="))
        .collect();
    assert_eq!(reruns.len(), 5, "{cargo:?}");
    assert!(reruns.iter().any(|l| l.ends_with("sub/leaf.cuh")));
    assert_eq!(s.digest.len(), 64);
    assert!(s
        .digest
        .bytes()
        .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
    // A source outside every include dir is named by its file name; headers beside it too.
    let other = test_dir("sources-outside");
    fs::write(
        other.join("x.cu"),
        "#include \"x.cuh\"\n#include \"common.cuh\"\n",
    )
    .unwrap();
    fs::write(other.join("x.cuh"), "int x;\n").unwrap();
    let s = collect(
        &[spec("mx", &[&other.join("x.cu")], &[])],
        &[k],
        &[],
        &mut cargo,
    )
    .unwrap();
    assert_eq!(names(&s), ["common.cuh", "x.cu", "x.cuh"]);
}

#[test]
fn a_missing_include_names_the_file_and_line() {
    let (_dir, k) = tree();
    fs::write(
        k.join("sub/deep.cuh"),
        "#pragma once\n\n#include \"sub/gone.cuh\"\n",
    )
    .unwrap();
    let specs = [spec("ma", &[&k.join("a.cu")], &[])];
    let e = collect(&specs, std::slice::from_ref(&k), &[], &mut Vec::new()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidConfig);
    let msg = e.to_string();
    assert!(
        msg.contains("sub/deep.cuh:3: #include \"sub/gone.cuh\" not found"),
        "{msg}"
    );
    assert!(
        msg.contains(&k.canonicalize().unwrap().display().to_string()),
        "{msg}"
    );
    assert!(msg.contains("fix:"), "{msg}");
    // Without the include dir the top-level include is found beside a.cu, but sub/deep.cuh's
    // "sub/leaf.cuh" (beside it: sub/sub/leaf.cuh) is not.
    fs::write(k.join("sub/deep.cuh"), "#include \"sub/leaf.cuh\"\n").unwrap();
    let e = collect(&specs, &[], &[], &mut Vec::new()).unwrap_err();
    assert!(
        e.to_string()
            .contains("deep.cuh:1: #include \"sub/leaf.cuh\" not found"),
        "{e}"
    );
}

#[test]
fn an_include_must_spell_the_name_nvrtc_will_know() {
    let (_dir, k) = tree();
    // Found beside sub/deep.cuh by a relative spelling, but embedded as "sub/leaf.cuh".
    fs::write(k.join("sub/deep.cuh"), "#include \"leaf.cuh\"\n").unwrap();
    let specs = [spec("ma", &[&k.join("a.cu")], &[])];
    let e = collect(&specs, std::slice::from_ref(&k), &[], &mut Vec::new()).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("deep.cuh:1: #include \"leaf.cuh\""), "{msg}");
    assert!(
        msg.contains("fix: write #include \"sub/leaf.cuh\""),
        "{msg}"
    );
    // Two different sources that would share a name.
    let other = test_dir("sources-clash");
    fs::write(other.join("a.cu"), "int other;\n").unwrap();
    fs::write(k.join("sub/deep.cuh"), "#include \"sub/leaf.cuh\"\n").unwrap();
    let specs = [
        spec("ma", &[&k.join("a.cu")], &[]),
        spec("mo", &[&other.join("a.cu")], &[]),
    ];
    let e = collect(&specs, &[k], &[], &mut Vec::new()).unwrap_err();
    assert!(e.to_string().contains("would both be named `a.cu`"), "{e}");
}

#[test]
fn the_digest_changes_with_any_header_and_only_then() {
    let (_dir, k) = tree();
    let specs = [spec("ma", &[&k.join("a.cu")], &[])];
    let digest = || {
        collect(&specs, std::slice::from_ref(&k), &[], &mut Vec::new())
            .unwrap()
            .digest
    };
    let d0 = digest();
    assert_eq!(d0, digest());
    fs::write(k.join("unused.cuh"), "int changed;\n").unwrap();
    assert_eq!(d0, digest(), "a header no source includes");
    fs::write(k.join("sub/leaf.cuh"), "#pragma once\nint leaf2;\n").unwrap();
    let d1 = digest();
    assert_ne!(d0, d1, "a transitively included header");
    fs::write(k.join("sub/leaf.cuh"), "#pragma once\nint leaf;\n").unwrap();
    assert_eq!(d0, digest());
    // The names count too, not only the texts.
    let f = |name: &str, text: &[u8]| SourceFile {
        name: name.into(),
        path: PathBuf::new(),
        text: text.to_vec(),
    };
    assert_ne!(digest_of(&[f("a", b"bc")]), digest_of(&[f("ab", b"c")]));
    assert_eq!(super::digest(&[]), "");
}

fn digest_of(files: &[SourceFile]) -> String {
    super::digest(files)
}

#[test]
fn nvcc_flags_become_nvrtc_options() {
    let defines = [
        ("WF_DIM".to_string(), Some("2".to_string())),
        ("FLAG".to_string(), None),
    ];
    let build: Vec<(String, String)> = [
        "--use_fast_math",
        "-O3",
        "-std",
        "c++17",
        "-arch=sm_80",
        "-gencode",
        "arch=compute_80,code=sm_80",
        "-Xptxas",
        "-v",
        "-D",
        "SEP=1",
        "-lineinfo",
        "-ccbin",
        "gcc-12",
        "--maxrregcount=64",
    ]
    .iter()
    .map(|f| (f.to_string(), "WARPFFT_NVCC_FLAGS".to_string()))
    .collect();
    let (opts, dropped) = nvrtc_options(&defines, &build, &["-G".into(), "-UX".into()], "m");
    assert_eq!(
        opts,
        [
            "-DWF_DIM=2",
            "-DFLAG",
            "--use_fast_math",
            "--std=c++17",
            "--ptxas-options=-v",
            "-DSEP=1",
            "-lineinfo",
            "--maxrregcount=64",
            "-G",
            "-UX",
        ]
    );
    let dropped: Vec<&str> = dropped.iter().map(|(f, _)| f.as_str()).collect();
    assert_eq!(dropped, ["-O3", "-ccbin gcc-12"]);
    // A dropped flag is a warning naming where it came from.
    let (_dir, k) = tree();
    let mut cargo = Vec::new();
    let flags = [("-O3".to_string(), "WARPFFT_NVCC_FLAGS".to_string())];
    collect(
        &[spec("ma", &[&k.join("b.cu")], &[])],
        &[k],
        &flags,
        &mut cargo,
    )
    .unwrap();
    let w: Vec<&String> = cargo.iter().filter(|l| l.starts_with("warning=")).collect();
    assert_eq!(w.len(), 1, "{cargo:?}");
    assert!(w[0].contains("`-O3` (from WARPFFT_NVCC_FLAGS)"), "{}", w[0]);
}
