//! The planner's command lines, keys and deduplication, on a fixture of three sources.

use super::*;
use crate::cache::test_dir;
use std::fs;

struct Fixture {
    dir: PathBuf,
    cache: PathBuf,
    modules: Vec<ModuleSpec>,
}

fn fixture() -> Fixture {
    let dir = test_dir("plan");
    fs::write(dir.join("a.cu"), "// a").unwrap();
    fs::write(dir.join("b.cu"), "// b").unwrap();
    fs::write(dir.join("k.cu"), "// k").unwrap();
    let src = |n: &str| (dir.join(n), format!("kernels/{n}"));
    let modules = vec![
        ModuleSpec {
            name: "pair".into(),
            sources: vec![src("a.cu"), src("b.cu")],
            defines: vec![("WF_W".into(), Some("6".into())), ("FAST".into(), None)],
            flags: vec![],
        },
        ModuleSpec {
            name: "single".into(),
            sources: vec![src("k.cu")],
            defines: vec![],
            flags: vec!["-lineinfo".into()],
        },
    ];
    Fixture {
        cache: dir.join("cache"),
        dir,
        modules,
    }
}

fn inputs<'a>(f: &'a Fixture, mode: Mode, flags: &'a [String]) -> PlanInputs<'a> {
    PlanInputs {
        mode,
        archs: &[80, 90],
        ptx_arch: 75,
        nvcc_flags: flags,
        ptxas_flags: &[],
        includes: std::slice::from_ref(&f.dir),
        header_listing: b"inc",
        compress: true,
        cache_dir: &f.cache,
        toolkit_version: "release 13.0, V13.0.88",
        nvcc_env: &[],
    }
}

/// A command line with paths shortened to file names and cache keys replaced by `K`.
fn line(tool: Tool, args: &[Arg], out: &Path) -> String {
    let mut words = vec![tool.name().to_string()];
    for a in args {
        let w = a.render(out).to_string_lossy().into_owned();
        words.push(match w.find('/') {
            None => w,
            Some(i) => {
                let name = Path::new(&w[i..]).file_name().unwrap().to_string_lossy();
                let name: Vec<&str> = name
                    .split('.')
                    .map(|p| {
                        let key = p.len() == 24 && p.bytes().all(|b| b.is_ascii_hexdigit());
                        if key {
                            "K"
                        } else {
                            p
                        }
                    })
                    .collect();
                format!("{}{}", &w[..i], name.join("."))
            }
        });
    }
    words.join(" ")
}

fn ptx_lines(p: &PtxPlan, cache: &Path) -> Vec<String> {
    let k = "0".repeat(24);
    p.jobs
        .iter()
        .map(|j| line(Tool::Nvcc, &j.args, &j.ptx_file(cache, &k)))
        .collect()
}

/// Plans both phases, pretending each PTX file is `<stem>.K.ptx`.
fn both(inp: &PlanInputs<'_>, modules: &[ModuleSpec]) -> (PtxPlan, Plan) {
    let ptx = plan_ptx(inp, modules).unwrap();
    let paths: Vec<Vec<PathBuf>> = ptx
        .modules
        .iter()
        .map(|ids| {
            ids.iter()
                .map(|&i| {
                    let path = ptx.jobs[i].ptx_file(inp.cache_dir, &"0".repeat(24));
                    fs::create_dir_all(inp.cache_dir).unwrap();
                    fs::write(&path, format!("// {}", ptx.jobs[i].stem)).unwrap();
                    path
                })
                .collect()
        })
        .collect();
    let aot = plan_aot(inp, modules, &paths).unwrap();
    (ptx, aot)
}

fn aot_lines(p: &Plan) -> Vec<String> {
    p.jobs
        .iter()
        .map(|j| line(j.tool, &j.args, &j.output))
        .collect()
}

#[test]
fn jit_runs_nvcc_only() {
    let f = fixture();
    let flags = ["--use_fast_math".to_string()];
    let (ptx, aot) = both(&inputs(&f, Mode::Jit, &flags), &f.modules);
    let inc = f.dir.file_name().unwrap().to_string_lossy().into_owned();
    assert_eq!(
        ptx_lines(&ptx, &f.cache),
        [
            format!(
                "nvcc -ptx -rdc=true -arch=compute_75 -DWF_W=6 -DFAST -I{inc} \
                 --use_fast_math a.cu -o a.K.ptx"
            ),
            format!(
                "nvcc -ptx -rdc=true -arch=compute_75 -DWF_W=6 -DFAST -I{inc} \
                 --use_fast_math b.cu -o b.K.ptx"
            ),
            format!(
                "nvcc -ptx -rdc=true -arch=compute_75 -I{inc} --use_fast_math -lineinfo \
                 k.cu -o k.K.ptx"
            ),
        ]
    );
    assert_eq!(ptx.modules, [vec![0, 1], vec![2]]);
    assert!(aot.jobs.is_empty());
    assert!(aot
        .modules
        .iter()
        .all(|m| m.ptx_blobs && m.fatbin.is_none()));
    let _ = fs::remove_dir_all(&f.dir);
}

#[test]
fn aot_links_per_arch_and_packs_one_fatbin_per_module() {
    let f = fixture();
    let (_, p) = both(&inputs(&f, Mode::Aot, &[]), &f.modules);
    let l = aot_lines(&p);
    let has = |s: &str| assert!(l.contains(&s.to_string()), "missing {s} in {l:#?}");
    has("ptxas -c -arch=sm_80 a.K.ptx -o a.sm_80.K.cubin");
    has("ptxas -c -arch=sm_90 b.K.ptx -o b.sm_90.K.cubin");
    has("nvlink -arch=sm_80 a.sm_80.K.cubin b.sm_80.K.cubin -o pair.sm_80.K.cubin");
    has(
        "fatbinary --64 --create=pair.K.fatbin --image3=kind=elf,sm=80,file=pair.sm_80.K.cubin \
         --image3=kind=elf,sm=90,file=pair.sm_90.K.cubin",
    );
    has("fatbinary --64 --create=single.K.fatbin \
         --image3=kind=elf,sm=80,file=single.sm_80.K.cubin \
         --image3=kind=elf,sm=90,file=single.sm_90.K.cubin");
    // 3 sources x 2 archs ptxas + 2 modules x 2 archs nvlink + 2 fatbinary.
    assert_eq!(p.jobs.len(), 6 + 4 + 2);
    assert!(p.modules.iter().all(|m| !m.ptx_blobs && !m.ptx_in_fatbin));
    // Dependencies only point to earlier tools.
    for j in &p.jobs {
        assert!(j.deps.iter().all(|&d| p.jobs[d].tool < j.tool));
    }
    let _ = fs::remove_dir_all(&f.dir);
}

#[test]
fn aot_jit_adds_ptx_to_single_source_fatbins_and_blobs_for_the_rest() {
    let f = fixture();
    let (_, p) = both(&inputs(&f, Mode::AotJit, &[]), &f.modules);
    let fat: Vec<String> = p
        .modules
        .iter()
        .map(|m| {
            let j = &p.jobs[m.fatbin.unwrap()];
            line(j.tool, &j.args, &j.output)
        })
        .collect();
    assert!(!fat[0].contains("kind=ptx"));
    assert!(
        fat[1].ends_with("--image3=kind=ptx,sm=75,file=k.K.ptx"),
        "{}",
        fat[1]
    );
    assert!(p.modules[0].ptx_blobs && !p.modules[0].ptx_in_fatbin);
    assert!(!p.modules[1].ptx_blobs && p.modules[1].ptx_in_fatbin);
    let mut no_compress = inputs(&f, Mode::AotJit, &[]);
    no_compress.compress = false;
    let (_, p) = both(&no_compress, &f.modules);
    let j = &p.jobs[p.modules[1].fatbin.unwrap()];
    assert!(line(j.tool, &j.args, &j.output).contains("--64 --compress=false"));
    let _ = fs::remove_dir_all(&f.dir);
}

#[test]
fn keys_are_stable_and_sensitive_to_every_input() {
    let f = fixture();
    let key = |inp: &PlanInputs<'_>, modules: &[ModuleSpec]| {
        plan_ptx(inp, modules).unwrap().jobs[0].key.clone()
    };
    let base = key(&inputs(&f, Mode::Jit, &[]), &f.modules);
    // Stable: same inputs, same key; mode and cache dir do not matter.
    assert_eq!(base, key(&inputs(&f, Mode::Jit, &[]), &f.modules));
    assert_eq!(base, key(&inputs(&f, Mode::AotJit, &[]), &f.modules));
    let other_cache = f.dir.join("elsewhere");
    let mut moved = inputs(&f, Mode::Jit, &[]);
    moved.cache_dir = &other_cache;
    assert_eq!(base, key(&moved, &f.modules));
    // Sensitive: defines, flags, ptx arch, toolkit, header listing, source content.
    let mut m2 = f.modules.clone();
    m2[0].defines[0].1 = Some("7".into());
    assert_ne!(base, key(&inputs(&f, Mode::Jit, &[]), &m2));
    let flags = ["-O3".to_string()];
    assert_ne!(base, key(&inputs(&f, Mode::Jit, &flags), &f.modules));
    let mut i = inputs(&f, Mode::Jit, &[]);
    i.ptx_arch = 80;
    assert_ne!(base, key(&i, &f.modules));
    let mut i = inputs(&f, Mode::Jit, &[]);
    i.toolkit_version = "release 13.1, V13.1.0";
    assert_ne!(base, key(&i, &f.modules));
    let mut i = inputs(&f, Mode::Jit, &[]);
    i.header_listing = b"other";
    assert_ne!(base, key(&i, &f.modules));
    // The variables nvcc reads: `NVCC_APPEND_FLAGS=-lineinfo` changes the PTX, so its key.
    let mut keys = vec![base.clone()];
    for env in [
        ("NVCC_APPEND_FLAGS", "-lineinfo"),
        ("NVCC_PREPEND_FLAGS", "-lineinfo"),
        ("NVCC_CCBIN", "clang"),
        ("CPATH", "/opt/inc"),
        ("NVCC_APPEND_FLAGS", ""),
    ] {
        let env = [(env.0.to_string(), env.1.to_string())];
        let mut i = inputs(&f, Mode::Jit, &[]);
        i.nvcc_env = &env;
        keys.push(key(&i, &f.modules));
    }
    let distinct: std::collections::BTreeSet<_> = keys.iter().collect();
    assert_eq!(distinct.len(), keys.len(), "{keys:?}");
    fs::write(f.dir.join("a.cu"), "// a, edited").unwrap();
    assert_ne!(base, key(&inputs(&f, Mode::Jit, &[]), &f.modules));
    fs::write(f.dir.join("a.cu"), "// a").unwrap();
    assert_eq!(base, key(&inputs(&f, Mode::Jit, &[]), &f.modules));
    // The AOT keys follow the PTX names and the arch.
    let (_, p1) = both(&inputs(&f, Mode::Aot, &[]), &f.modules);
    let (_, p2) = both(&inputs(&f, Mode::Aot, &[]), &f.modules);
    let outs = |p: &Plan| p.jobs.iter().map(|j| j.output.clone()).collect::<Vec<_>>();
    assert_eq!(outs(&p1), outs(&p2));
    let _ = fs::remove_dir_all(&f.dir);
}

#[test]
fn shared_sources_are_compiled_once() {
    let f = fixture();
    let mut modules = f.modules.clone();
    modules[1].sources = modules[0].sources.clone();
    modules[1].defines = modules[0].defines.clone();
    modules[1].flags.clear();
    let (ptx, p) = both(&inputs(&f, Mode::Aot, &[]), &modules);
    assert_eq!(ptx.modules[0], ptx.modules[1]);
    assert_eq!(ptx.jobs.len(), 2);
    assert_eq!(p.jobs.iter().filter(|j| j.tool == Tool::Ptxas).count(), 4);
    let _ = fs::remove_dir_all(&f.dir);
}

#[test]
fn missing_source_is_an_io_error_naming_it() {
    let f = fixture();
    let mut modules = f.modules.clone();
    modules[0].sources[0].0 = f.dir.join("gone.cu");
    let e = plan_ptx(&inputs(&f, Mode::Jit, &[]), &modules).unwrap_err();
    assert!(e.to_string().contains("gone.cu"), "{e}");
    let _ = fs::remove_dir_all(&f.dir);
}
