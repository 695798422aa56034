//! The builder against a fake toolkit of shell scripts (no CUDA needed); the real toolchain
//! is exercised by `tests/end_to_end.rs`.

use std::fs;
use std::path::PathBuf;

use super::Build;
use crate::cache::{test_dir, write_script};
use crate::error::ErrorKind;
use crate::mode::Mode;
use crate::module::Module;
use crate::toolkit::Toolkit;

mod rust;
mod sources;

struct Fake {
    dir: PathBuf,
    log: PathBuf,
    toolkit: Toolkit,
}

fn fake() -> Fake {
    let dir = test_dir("builder");
    let bin = dir.join("bin");
    fs::create_dir_all(&bin).unwrap();
    let log = dir.join("log");
    let out_arg = r#"out=""; src=""
while [ $# -gt 0 ]; do
  case "$1" in
    -o) out="$2"; shift ;; -MF) deps="$2"; shift ;; --create=*) out="${1#--create=}" ;;
    *.cu) src="$1" ;;
  esac
  shift
done"#;
    let log_s = log.display();
    // With a file `slow` in the test dir, every tool takes a while (for concurrency tests).
    let out_arg = format!("{out_arg}\n[ -f {}/slow ] && sleep 0.3", dir.display());
    let out_arg = out_arg.as_str();
    write_script(
        &bin.join("nvcc"),
        &format!(
            "#!/bin/sh\n{out_arg}\necho nvcc >> {log_s}\n\
             if grep -q FAIL \"$src\"; then echo \"$src(1): error: boom\" >&2; exit 2; fi\n\
             if grep -q NOCICC \"$src\"; then echo 'sh: 1: cicc: not found' >&2; exit 255; fi\n\
             n=$(basename \"$src\" .cu)\n\
             hdr=\"\"; [ \"$n\" = a ] && hdr=\"$(dirname \"$src\")/common.cuh\"\n\
             printf '%s : %s %s\\n' \"$out\" \"$src\" \"$hdr\" > \"$deps\"\n\
             printf '.version 9.0\\n.target sm_75\\n.visible .entry %s_k(\\n)\\n' \"$n\" > \"$out\"\n"
        ),
    );
    for tool in ["ptxas", "nvlink"] {
        write_script(
            &bin.join(tool),
            &format!("#!/bin/sh\n{out_arg}\necho {tool} >> {log_s}\necho cubin > \"$out\"\n"),
        );
    }
    // An empty but well-formed fatbin container.
    write_script(
        &bin.join("fatbinary"),
        &format!(
            "#!/bin/sh\n{out_arg}\necho fatbinary >> {log_s}\n\
             printf '\\120\\355\\125\\272\\001\\000\\020\\000\\000\\000\\000\\000\\000\\000\\000\\000' > \"$out\"\n"
        ),
    );
    let k = dir.join("kernels");
    fs::create_dir_all(&k).unwrap();
    fs::write(k.join("a.cu"), "// a").unwrap();
    fs::write(k.join("b.cu"), "// b").unwrap();
    fs::write(k.join("common.cuh"), "// common").unwrap();
    Fake {
        toolkit: Toolkit::fake(&bin),
        log,
        dir,
    }
}

impl Fake {
    /// A build in `mode` with the fake toolkit, writing to `out` and `cache` here: no modules.
    fn bare(&self, mode: Mode) -> Build {
        Build::new()
            .mode(mode)
            .toolkit(self.toolkit.clone())
            .cargo_metadata(false)
            .out_dir(self.dir.join("out"))
            .cache_dir(self.dir.join("cache"))
    }

    /// The bare build with C output, archs 80 and 90, and two modules: `pair` (a.cu, b.cu) and
    /// `solo` (a.cu with `X=1`).
    fn build(&self, mode: Mode) -> Build {
        let k = self.dir.join("kernels");
        self.bare(mode)
            .emit_c(true)
            .arch_list(&[80, 90])
            .module(
                Module::new("pair")
                    .source(k.join("a.cu"))
                    .source(k.join("b.cu")),
            )
            .module(Module::new("solo").source(k.join("a.cu")).define("X", "1"))
    }

    fn runs(&self) -> usize {
        let n = fs::read_to_string(&self.log).map_or(0, |s| s.lines().count());
        let _ = fs::remove_file(&self.log);
        n
    }
}

#[test]
fn second_embed_runs_no_tool_and_jit_aot_share_ptx() {
    let f = fake();
    let e = f.build(Mode::Jit).embed("k").unwrap();
    assert_eq!((e.stats.nvcc, e.stats.tools_run()), (3, 3));
    assert_eq!(f.runs(), 3);
    assert_eq!(e.modules[0].kernels, ["a_k", "b_k"]);
    let e = f.build(Mode::Jit).embed("k").unwrap();
    assert_eq!(
        (e.stats.tools_run(), e.stats.cache_hits, f.runs()),
        (0, 3, 0)
    );
    // AOT reuses the PTX; ptxas keys on the PTX content, and the fake writes the same PTX
    // for a.cu with and without X=1: 2 distinct PTX x 2 archs ptxas, 2 modules x 2 archs
    // nvlink, 2 fatbins.
    let e = f.build(Mode::Aot).embed("k").unwrap();
    let s = e.stats;
    assert_eq!((s.nvcc, s.ptxas, s.nvlink, s.fatbinary), (0, 4, 4, 2));
    assert_eq!(f.runs(), 10);
    let e = f.build(Mode::Aot).embed("k").unwrap();
    assert_eq!((e.stats.tools_run(), f.runs()), (0, 0));
    // Editing a header reruns nvcc for the sources that include it (the fake says only
    // a.cu does, in two modules with different defines), and nothing downstream here since
    // the fake's PTX does not depend on the header.
    fs::write(f.dir.join("kernels/common.cuh"), "// edited").unwrap();
    let e = f.build(Mode::Aot).embed("k").unwrap();
    assert_eq!((e.stats.nvcc, e.stats.tools_run()), (2, 2));
    // A new header anywhere in an include dir or beside a source may shadow another one:
    // everything is recompiled.
    fs::write(f.dir.join("kernels/new.h"), "").unwrap();
    let e = f.build(Mode::Aot).embed("k").unwrap();
    assert_eq!(e.stats.nvcc, 3);
    let c = fs::read_to_string(e.c_file.as_ref().unwrap()).unwrap();
    assert!(c.contains("const char k_mode[] = \"aot\";"));
    let _ = fs::remove_dir_all(&f.dir);
}

#[test]
fn a_failing_tool_reports_command_status_output_and_fix() {
    let f = fake();
    fs::write(f.dir.join("kernels/b.cu"), "FAIL").unwrap();
    let e = f.build(Mode::Jit).embed("k").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ToolFailed);
    let msg = e.to_string();
    for want in [
        "nvcc failed building PTX of ",
        "b.cu (module `pair`)",
        "exit status: 2",
        "command: ",
        "/bin/nvcc -ptx -rdc=true -arch=compute_75 ",
        "error: boom",
        "fix: correct the CUDA source",
    ] {
        assert!(msg.contains(want), "missing `{want}` in:\n{msg}");
    }
    // No partial outputs are left in the cache.
    let names: Vec<String> = fs::read_dir(f.dir.join("cache"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.contains(".tmp")), "{names:?}");
    let _ = fs::remove_dir_all(&f.dir);
}

#[test]
fn configuration_errors_are_explained() {
    let f = fake();
    let err = |b: Build, name: &str| b.embed(name).unwrap_err().to_string();
    assert!(err(f.build(Mode::Jit), "bad-name").contains("C identifier"));
    let msg = err(f.build(Mode::Aot).archs("80;95"), "k");
    assert!(
        msg.contains("sm_95 is not supported") && msg.contains("75 80 86"),
        "{msg}"
    );
    let msg = err(
        f.build(Mode::Aot).arch_list(&[75]).ptx_arch("compute_80"),
        "k",
    );
    assert!(msg.contains("older than the PTX arch"), "{msg}");
    let msg = err(f.build(Mode::Jit).ptx_arch("compute_52"), "k");
    assert!(msg.contains("PTX arch `compute_52`"), "{msg}");
    let msg = err(
        f.build(Mode::Jit)
            .module(Module::new("pair").source("x.cu")),
        "k",
    );
    assert!(msg.contains("two modules are named `pair`"), "{msg}");
    let msg = err(f.build(Mode::Jit).module(Module::new("empty")), "k");
    assert!(msg.contains("module `empty` has no sources"), "{msg}");
    let msg = err(f.build(Mode::Jit).include(f.dir.join("nope")), "k");
    assert!(msg.contains("nope does not exist"), "{msg}");
    // In JIT mode a bad arch list is never looked at.
    assert!(f.build(Mode::Jit).archs("nonsense").embed("k").is_ok());
    let _ = fs::remove_dir_all(&f.dir);
}

#[test]
fn cargo_lines_cover_sources_includes_and_env_vars() {
    let f = fake();
    let b = f.build(Mode::Aot).include(f.dir.join("kernels"));
    let b = b.archs_from_env("FATBUILD_TEST_UNSET_ARCHS");
    let b = b.nvcc_flags_from_env("FATBUILD_TEST_UNSET_FLAGS");
    let mut lines = Vec::new();
    b.embed_inner("k", &mut lines).unwrap();
    for want in [
        "rerun-if-env-changed=FATBUILD_TEST_UNSET_ARCHS".to_string(),
        "rerun-if-env-changed=FATBUILD_TEST_UNSET_FLAGS".to_string(),
        "rerun-if-env-changed=FATBUILD_CACHE_DIR".to_string(),
        "rerun-if-env-changed=NVCC_APPEND_FLAGS".to_string(),
        "rerun-if-env-changed=NVCC_PREPEND_FLAGS".to_string(),
        "rerun-if-env-changed=NVCC_CCBIN".to_string(),
        "rerun-if-env-changed=CPATH".to_string(),
        format!("rerun-if-changed={}", f.dir.join("kernels/a.cu").display()),
        format!(
            "rerun-if-changed={}",
            f.dir.join("kernels/common.cuh").display()
        ),
    ] {
        assert!(lines.contains(&want), "missing {want} in {lines:?}");
    }
    // An explicit toolkit means NVCC & co. are not read; its nvcc is still watched.
    assert!(!lines.iter().any(|l| l.ends_with("=NVCC")));
    let nvcc = format!("rerun-if-changed={}", f.dir.join("bin/nvcc").display());
    assert!(lines.contains(&nvcc), "{lines:#?}");
    // Each input once (a.cu is a source of both modules).
    let mut unique = lines.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), lines.len(), "repeated lines: {lines:#?}");
    // A JIT build never reads the arch list, so it does not rerun when it changes.
    let b = f
        .build(Mode::Jit)
        .archs_from_env("FATBUILD_TEST_UNSET_ARCHS");
    let mut lines = Vec::new();
    b.embed_inner("k", &mut lines).unwrap();
    assert!(!lines
        .iter()
        .any(|l| l.contains("FATBUILD_TEST_UNSET_ARCHS")));
    let _ = fs::remove_dir_all(&f.dir);
}

#[test]
fn a_toolkit_switch_behind_a_link_reruns() {
    let f = fake();
    let link = f.dir.join("cuda-current");
    std::os::unix::fs::symlink(f.dir.join("bin"), &link).unwrap();
    let mut lines = Vec::new();
    let b = f.build(Mode::Jit).toolkit(Toolkit::fake(&link));
    b.embed_inner("k", &mut lines).unwrap();
    let real = fs::canonicalize(f.dir.join("bin/nvcc")).unwrap();
    for p in [link.join("nvcc"), real] {
        let want = format!("rerun-if-changed={}", p.display());
        assert!(lines.contains(&want), "missing {want}: {lines:#?}");
    }
    let _ = fs::remove_dir_all(&f.dir);
}

#[test]
fn a_blank_arch_list_warns_in_aot_builds() {
    let f = fake();
    let var = "FATBUILD_TEST_BLANK_ARCHS";
    std::env::set_var(var, "  ");
    let b = f.bare(Mode::Aot).archs_from_env(var);
    std::env::remove_var(var);
    let b = b.module(Module::new("a").source(f.dir.join("kernels/a.cu")));
    let e = b.embed("k").unwrap();
    assert_eq!(e.archs, [75, 80, 86, 89, 90, 100, 120]);
    assert_eq!(e.warnings.len(), 1, "{:#?}", e.warnings);
    let w = &e.warnings[0];
    assert!(
        w.contains(&format!("{var} is set but blank")) && w.contains("7 archs"),
        "{w}"
    );
    // The same build in JIT mode reads no arch list: no warning.
    let e = b.mode(Mode::Jit).embed("k").unwrap();
    assert!(e.warnings.is_empty(), "{:#?}", e.warnings);
    let _ = fs::remove_dir_all(&f.dir);
}

#[test]
fn a_toolkit_without_cicc_is_named_as_the_culprit() {
    let f = fake();
    fs::write(f.dir.join("kernels/b.cu"), "NOCICC").unwrap();
    let msg = f.build(Mode::Jit).embed("k").unwrap_err().to_string();
    assert!(
        msg.contains("fix: nvcc could not start `cicc`, a program of the CUDA toolkit")
            && msg.contains("the toolkit is incomplete"),
        "{msg}"
    );
    assert!(!msg.contains("correct the CUDA source"), "{msg}");
    let _ = fs::remove_dir_all(&f.dir);
}

/// The cache outputs whose names end in `ext`.
fn outputs(cache: &std::path::Path, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(ext))
        .collect();
    v.sort();
    v
}

#[test]
fn cache_entries_are_verified_on_every_hit() {
    let f = fake();
    let cache = f.dir.join("cache");
    let e = f.build(Mode::Aot).embed("k").unwrap();
    let want = fs::read(e.c_file.as_ref().unwrap()).unwrap();
    f.runs();
    // Every output has its digest beside it.
    for p in outputs(&cache, ".ptx")
        .into_iter()
        .chain(outputs(&cache, ".cubin"))
        .chain(outputs(&cache, ".fatbin"))
    {
        assert!(crate::cache::sum_path(&p).is_file(), "{}", p.display());
    }
    // A truncated PTX, a zero-length fatbin (a crash after an unsynced rename), a fatbin
    // with a flipped byte: each is rebuilt, with one warning naming it.
    let ptx = outputs(&cache, ".ptx");
    let fatbins = outputs(&cache, ".fatbin");
    let data = fs::read(&ptx[0]).unwrap();
    fs::write(&ptx[0], &data[..data.len() - 3]).unwrap();
    fs::write(&fatbins[0], "").unwrap();
    let mut data = fs::read(&fatbins[1]).unwrap();
    data[4] ^= 1;
    fs::write(&fatbins[1], data).unwrap();
    let e = f.build(Mode::Aot).embed("k").unwrap();
    let s = e.stats;
    assert_eq!((s.nvcc, s.ptxas, s.nvlink, s.fatbinary), (1, 0, 0, 2));
    assert_eq!(fs::read(e.c_file.as_ref().unwrap()).unwrap(), want);
    assert_eq!(e.warnings.len(), 3, "{:#?}", e.warnings);
    for p in [&ptx[0], &fatbins[0], &fatbins[1]] {
        let name = p.display().to_string();
        assert!(
            e.warnings
                .iter()
                .any(|w| w.starts_with("fatbuild (") && w.contains(&name)),
            "no warning names {name}: {:#?}",
            e.warnings
        );
    }
    // A missing digest file is no proof either; a truncated `.deps` list is ignored.
    let linked = outputs(&cache, ".cubin")
        .into_iter()
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("pair.sm_80.")
        })
        .unwrap();
    fs::remove_file(crate::cache::sum_path(&linked)).unwrap();
    assert!(fatbins[0].to_string_lossy().contains("/pair."));
    fs::remove_file(&fatbins[0]).unwrap();
    let deps = outputs(&cache, ".deps");
    let text = fs::read_to_string(&deps[0]).unwrap();
    fs::write(&deps[0], &text[..text.len() - 4]).unwrap();
    let e = f.build(Mode::Aot).embed("k").unwrap();
    assert!(e.stats.nvcc == 1 && e.stats.fatbinary == 1, "{:?}", e.stats);
    assert!(e.stats.ptxas + e.stats.nvlink == 1, "{:?}", e.stats);
    assert_eq!(fs::read(e.c_file.as_ref().unwrap()).unwrap(), want);
    let e = f.build(Mode::Aot).embed("k").unwrap();
    assert_eq!((e.stats.tools_run(), e.warnings.len()), (0, 0));
    let _ = fs::remove_dir_all(&f.dir);
}

#[test]
fn shell_syntax_is_refused_before_anything_runs() {
    let f = fake();
    let marker = f.dir.join("pwned");
    let var = "FATBUILD_TEST_INJECTED_FLAGS";
    std::env::set_var(var, format!("-O3 -DX=$(touch${{IFS}}{})", marker.display()));
    let err = f.build(Mode::Jit).nvcc_flags_from_env(var).embed("k");
    std::env::remove_var(var);
    let msg = err.unwrap_err().to_string();
    for want in [
        format!(
            "nvcc flag `-DX=$(touch${{IFS}}{})` (from {var})",
            marker.display()
        ),
        "contains `$`".into(),
        "sh -c".into(),
        "Nothing was run".into(),
        format!("fix: remove those characters from {var}"),
    ] {
        assert!(msg.contains(&want), "missing `{want}` in:\n{msg}");
    }
    // Paths: the cache directory, a source (the checkout), an include directory.
    let cache = f.dir.join("c$HOME");
    let msg = f.build(Mode::Jit).cache_dir(&cache).embed("k").unwrap_err();
    let msg = msg.to_string();
    assert!(
        msg.contains(&format!(
            "cache directory {} (from Build::cache_dir)",
            cache.display()
        )) && msg.contains("FATBUILD_CACHE_DIR"),
        "{msg}"
    );
    let odd = f.dir.join("ch`eck`out");
    fs::create_dir_all(&odd).unwrap();
    fs::write(odd.join("x.cu"), "").unwrap();
    let msg = f
        .build(Mode::Jit)
        .module(Module::new("x").source(odd.join("x.cu")))
        .embed("k")
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains(&format!("source path {}", odd.join("x.cu").display()))
            && msg.contains("contains a backtick"),
        "{msg}"
    );
    let msg = f.build(Mode::Jit).include(&odd).nvcc_flag("-DQ=\"a\\b\"");
    let msg = msg.embed("k").unwrap_err().to_string();
    assert!(
        msg.contains("contains `\"`, `\\`") && msg.contains("Build::nvcc_flag"),
        "{msg}"
    );
    assert!(!marker.exists());
    assert_eq!(f.runs(), 0, "a tool ran");
    let _ = fs::remove_dir_all(&f.dir);
}

#[test]
fn concurrent_builds_wait_for_each_other_instead_of_repeating_jobs() {
    let f = fake();
    fs::write(f.dir.join("slow"), "").unwrap();
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| f.build(Mode::Aot).embed("k").unwrap());
        let b = s.spawn(|| f.build(Mode::Aot).embed("k").unwrap());
        (a.join().unwrap(), b.join().unwrap())
    });
    // One build's work (3 nvcc, 4 ptxas, 4 nvlink, 2 fatbinary), shared between them.
    assert_eq!(f.runs(), 13);
    assert_eq!(a.stats.tools_run() + b.stats.tools_run(), 13);
    assert_eq!(a.hash, b.hash);
    let names: Vec<String> = fs::read_dir(f.dir.join("cache"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names
            .iter()
            .all(|n| !n.ends_with(".lock") && !n.contains(".tmp")),
        "{names:?}"
    );
    let _ = fs::remove_dir_all(&f.dir);
}

#[test]
fn an_abandoned_claim_is_taken_over() {
    let f = fake();
    // Claims left by a build that died (no such process on this host).
    let e = f.build(Mode::Jit).embed("k").unwrap();
    let deps = outputs(&f.dir.join("cache"), ".deps");
    let host = fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    for d in &deps {
        fs::write(format!("{}.lock", d.display()), format!("999999999 {host}")).unwrap();
        fs::remove_file(d).unwrap();
    }
    f.runs();
    let e2 = f.build(Mode::Jit).embed("k").unwrap();
    assert_eq!((e2.stats.nvcc, f.runs()), (3, 3));
    assert_eq!(e2.hash, e.hash);
    let _ = fs::remove_dir_all(&f.dir);
}
