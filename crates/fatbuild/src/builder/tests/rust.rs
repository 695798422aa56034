//! The Rust output against the fake toolkit: which files are written, what the module says,
//! declared kernels, identifiers. (tests/rust_module.rs compiles and runs the real thing.)

use std::fs;

use super::fake;
use crate::error::ErrorKind;
use crate::mode::Mode;
use crate::module::Module;

#[test]
fn the_outputs_are_the_ones_asked_for() {
    let f = fake();
    let e = f.build(Mode::Jit).emit_c(false).embed("k").unwrap();
    assert!(e.c_file.is_none() && e.h_file.is_none());
    let rs = e.rs_file.clone().unwrap();
    assert_eq!(rs, f.dir.join("out/k.rs"));
    assert!(!f.dir.join("out/k.c").exists());
    let text = fs::read_to_string(&rs).unwrap();
    for want in [
        "use ::fatbuild_rt::__private::v1 as __fatbuild;",
        "pub static PAIR: ::fatbuild_rt::Module = __fatbuild::module(",
        "pub static SOLO: ::fatbuild_rt::Module = __fatbuild::module(",
        "__fatbuild::image(__fatbuild::PTX, \"a\", &__FATBUILD_M0_I0.bytes, &[])",
        "__fatbuild::image(__fatbuild::PTX, \"b\", &__FATBUILD_M0_I1.bytes, &[])",
        "&[\"a_k\", \"b_k\"],",
        "pub static MODULES: &[&::fatbuild_rt::Module] = &[&PAIR, &SOLO];",
        "pub static EMBED: ::fatbuild_rt::Embed = __fatbuild::embed(",
        "mod k { include!(concat!(env!(\"OUT_DIR\"), \"/k.rs\")); }",
    ] {
        assert!(text.contains(want), "{want:?} not in:\n{text}");
    }
    // The image files hold the PTX with a NUL appended, and the statics their exact length.
    let ptx = fs::read(f.dir.join("out/k/m0_i0.ptx")).unwrap();
    assert_eq!(ptx.last(), Some(&0));
    assert_eq!(ptx.len(), e.modules[0].blobs[0].bytes + 1);
    assert!(text.contains(&format!("Aligned<[u8; {}]>", ptx.len())));

    // C only: the Rust module is not written; a renamed runtime crate is named.
    let f = fake();
    let e = f.build(Mode::Aot).emit_rust(false).embed("k").unwrap();
    assert!(e.rs_file.is_none() && e.c_file.is_some());
    assert!(!f.dir.join("out/k.rs").exists());
    let e = f
        .build(Mode::AotJit)
        .rust_runtime_crate("crate::rt")
        .embed("k")
        .unwrap();
    let text = fs::read_to_string(e.rs_file.unwrap()).unwrap();
    assert!(text.contains("use crate::rt::__private::v1 as __fatbuild;"));
    assert!(text.contains("pub static PAIR: crate::rt::Module"));
    assert!(text.contains("__fatbuild::image(__fatbuild::FATBIN, \"fatbin\""));
}

#[test]
fn images_of_removed_modules_are_pruned() {
    let f = fake();
    f.build(Mode::Jit).embed("k").unwrap();
    assert!(f.dir.join("out/k/m1_i0.ptx").exists());
    let k = f.dir.join("kernels");
    f.bare(Mode::Jit)
        .module(Module::new("solo").source(k.join("a.cu")))
        .embed("k")
        .unwrap();
    assert!(f.dir.join("out/k/m0_i0.ptx").exists());
    assert!(!f.dir.join("out/k/m1_i0.ptx").exists(), "stale image left");
    assert!(!f.dir.join("out/k/m0_i1.ptx").exists(), "stale image left");
}

#[test]
fn declared_kernels_must_be_in_the_ptx() {
    let f = fake();
    let k = f.dir.join("kernels");
    let base = || f.bare(Mode::Jit);
    let e = base()
        .module(Module::new("m").source(k.join("a.cu")).kernel("a_k"))
        .embed("k")
        .unwrap();
    assert_eq!(e.modules[0].kernels, ["a_k"]);
    let err = base()
        .module(Module::new("m").source(k.join("a.cu")).kernel("saxpy"))
        .embed("k")
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidConfig);
    for want in [
        "module `m` declares kernel `saxpy`",
        "it has: a_k",
        "extern \"C\"",
    ] {
        assert!(err.message().contains(want), "{want:?} not in: {err}");
    }
}

#[test]
fn an_nvrtc_only_build_lists_the_declared_kernels() {
    let f = fake();
    let k = f.dir.join("kernels");
    let e = crate::Build::new()
        .mode(Mode::Nvrtc)
        .cargo_metadata(false)
        .out_dir(f.dir.join("out"))
        .include(&k)
        .module(
            Module::new("m")
                .source(k.join("b.cu"))
                .kernel("b_k")
                .kernel("b2"),
        )
        .module(Module::new("n").source(k.join("a.cu")))
        .embed("k")
        .unwrap();
    assert_eq!(e.modules[0].kernels, ["b_k", "b2"]);
    assert!(e.modules[1].kernels.is_empty());
    assert!(e.manifest_json.contains("\"kernels\":[\"b_k\",\"b2\"]"));
    let text = fs::read_to_string(e.rs_file.unwrap()).unwrap();
    assert!(text.contains("&[\"b_k\", \"b2\"],"), "{text}");
    assert!(
        text.contains("__fatbuild::file(\"b.cu\", include_bytes!("),
        "{text}"
    );
    assert!(text.contains("&[\"b.cu\"],"), "{text}");
}

#[test]
fn module_names_become_unique_identifiers() {
    let f = fake();
    let k = f.dir.join("kernels");
    let build = |names: &[&str]| {
        let mut b = crate::Build::new()
            .mode(Mode::Nvrtc)
            .cargo_metadata(false)
            .out_dir(f.dir.join("out"))
            .include(&k);
        for n in names {
            b = b.module(Module::new(*n).source(k.join("b.cu")));
        }
        b.embed("k")
    };
    let e = build(&["si-2d.f32", "2d", "_"]).unwrap();
    let text = fs::read_to_string(e.rs_file.unwrap()).unwrap();
    for want in [
        "pub static SI_2D_F32:",
        "pub static M_2D:",
        "pub static M__:",
    ] {
        assert!(text.contains(want), "{want:?} not in:\n{text}");
    }
    let err = build(&["a.b", "a-b"]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidConfig);
    assert!(
        err.message().contains("`A_B`") && err.message().contains("module `a.b` is too"),
        "{err}"
    );
    let err = build(&["embed"]).unwrap_err();
    assert!(err.message().contains("`EMBED`"), "{err}");
}
