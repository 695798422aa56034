//! Turning a build description into tool jobs with cache-keyed output paths.
//!
//! Two phases, since what a `.cu` file includes is known only once nvcc has run:
//! [`plan_ptx`] gives each nvcc job a key over its command line and source (the final PTX name
//! adds the contents of the headers nvcc reported, see [`crate::run::resolve_ptx`]);
//! [`plan_aot`] then derives every ptxas/nvlink/fatbinary command and output name from the
//! PTX file names alone. Nothing runs here.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::cache::{file_digest, KeyHasher};
use crate::error::Error;
use crate::mode::Mode;

/// The four tools, in pipeline order (a job's inputs come from earlier tools only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Tool {
    Nvcc,
    Ptxas,
    Nvlink,
    Fatbinary,
}

impl Tool {
    pub(crate) const PIPELINE: [Tool; 4] = [Tool::Nvcc, Tool::Ptxas, Tool::Nvlink, Tool::Fatbinary];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Tool::Nvcc => "nvcc",
            Tool::Ptxas => "ptxas",
            Tool::Nvlink => "nvlink",
            Tool::Fatbinary => "fatbinary",
        }
    }
}

/// How an input file enters a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HashBy {
    /// Path and contents (user sources).
    PathAndContent,
    /// Contents only (PTX: a header edit that leaves the PTX unchanged then reruns nothing
    /// downstream, though the PTX's own file name changed).
    Content,
    /// File name only (outputs of this same phase, whose names hold their keys).
    Name,
}

/// One command-line argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Arg {
    /// Passed as is and hashed as is.
    Lit(OsString),
    /// `prefix` + path of an input file, hashed as `by` says.
    Input {
        prefix: String,
        path: PathBuf,
        by: HashBy,
    },
    /// `prefix` + path of the output (a temporary name while the tool runs); not hashed.
    Output { prefix: String },
}

impl Arg {
    fn lit(s: impl Into<OsString>) -> Arg {
        Arg::Lit(s.into())
    }

    fn input(prefix: &str, path: &Path, by: HashBy) -> Arg {
        Arg::Input {
            prefix: prefix.into(),
            path: path.to_path_buf(),
            by,
        }
    }

    fn output(prefix: &str) -> Arg {
        Arg::Output {
            prefix: prefix.into(),
        }
    }

    /// The argument as passed, with `out` standing for the output path.
    pub(crate) fn render(&self, out: &Path) -> OsString {
        let (prefix, path) = match self {
            Arg::Lit(s) => return s.clone(),
            Arg::Input { prefix, path, .. } => (prefix, path.as_path()),
            Arg::Output { prefix } => (prefix, out),
        };
        let mut s = OsString::from(prefix);
        s.push(path);
        s
    }
}

/// One tool invocation producing one file.
#[derive(Debug, Clone)]
pub(crate) struct Job {
    pub(crate) tool: Tool,
    pub(crate) args: Vec<Arg>,
    pub(crate) output: PathBuf,
    /// Jobs whose outputs this one reads.
    pub(crate) deps: Vec<usize>,
    /// What it builds, for messages: "PTX of kernels/sort.cu (module `sort`)".
    pub(crate) what: String,
}

/// A module as the planner sees it: absolute source paths, the user's spelling for messages.
#[derive(Debug, Clone)]
pub(crate) struct ModuleSpec {
    pub(crate) name: String,
    pub(crate) sources: Vec<(PathBuf, String)>,
    pub(crate) defines: Vec<(String, Option<String>)>,
    pub(crate) flags: Vec<String>,
}

/// Everything the planner needs besides the modules.
#[derive(Debug, Clone)]
pub(crate) struct PlanInputs<'a> {
    pub(crate) mode: Mode,
    pub(crate) archs: &'a [u32],
    pub(crate) ptx_arch: u32,
    pub(crate) nvcc_flags: &'a [String],
    pub(crate) ptxas_flags: &'a [String],
    pub(crate) includes: &'a [PathBuf],
    /// Hash of the names of the headers in the include dirs and beside the sources: a new
    /// header may shadow another, so adding one recompiles everything (editing one recompiles
    /// only the sources that include it).
    pub(crate) header_listing: &'a [u8],
    pub(crate) compress: bool,
    pub(crate) cache_dir: &'a Path,
    pub(crate) toolkit_version: &'a str,
}

/// One nvcc run: `nvcc -ptx -rdc=true -arch=compute_XX -D.. -I.. flags.. src -o out.ptx`.
#[derive(Debug, Clone)]
pub(crate) struct PtxJob {
    pub(crate) args: Vec<Arg>,
    /// The key over the command line, the source and the header listing.
    pub(crate) key: String,
    /// File-name stem: the source's.
    pub(crate) stem: String,
    /// "PTX of kernels/sort.cu (module `sort`)".
    pub(crate) what: String,
}

impl PtxJob {
    /// Where the headers of the last run are listed: `<stem>.<key>.deps`.
    pub(crate) fn deps_file(&self, cache_dir: &Path) -> PathBuf {
        cache_dir.join(format!("{}.{}.deps", self.stem, self.key))
    }

    /// The PTX for a given key over `key` and the headers' contents: `<stem>.<key2>.ptx`.
    pub(crate) fn ptx_file(&self, cache_dir: &Path, full_key: &str) -> PathBuf {
        cache_dir.join(format!("{}.{full_key}.ptx", self.stem))
    }
}

/// The nvcc jobs, deduplicated, and which ones each module uses (in source order).
#[derive(Debug, Clone, Default)]
pub(crate) struct PtxPlan {
    pub(crate) jobs: Vec<PtxJob>,
    pub(crate) modules: Vec<Vec<usize>>,
}

/// What a module embeds, and its fatbinary job in the AOT modes.
#[derive(Debug, Clone)]
pub(crate) struct ModulePlan {
    /// The fatbinary job (AOT modes).
    pub(crate) fatbin: Option<usize>,
    /// Whether the PTX files are embedded as separate blobs.
    pub(crate) ptx_blobs: bool,
    /// Whether the fatbin carries the PTX image.
    pub(crate) ptx_in_fatbin: bool,
}

/// The ptxas, nvlink and fatbinary jobs.
#[derive(Debug, Clone, Default)]
pub(crate) struct Plan {
    pub(crate) jobs: Vec<Job>,
    pub(crate) modules: Vec<ModulePlan>,
}

/// Plans the nvcc job of every source of every module.
pub(crate) fn plan_ptx(inp: &PlanInputs<'_>, modules: &[ModuleSpec]) -> Result<PtxPlan, Error> {
    let mut plan = PtxPlan::default();
    let mut by_key: HashMap<(String, String), usize> = HashMap::new();
    let mut digests = HashMap::new();
    for m in modules {
        let mut ids = Vec::new();
        for (src, shown) in &m.sources {
            let mut args = vec![
                Arg::lit("-ptx"),
                Arg::lit("-rdc=true"),
                Arg::lit(format!("-arch=compute_{}", inp.ptx_arch)),
            ];
            for (k, v) in &m.defines {
                args.push(Arg::lit(match v {
                    Some(v) => format!("-D{k}={v}"),
                    None => format!("-D{k}"),
                }));
            }
            for dir in inp.includes {
                let mut s = OsString::from("-I");
                s.push(dir);
                args.push(Arg::Lit(s));
            }
            args.extend(inp.nvcc_flags.iter().chain(&m.flags).map(Arg::lit));
            args.extend([
                Arg::input("", src, HashBy::PathAndContent),
                Arg::lit("-o"),
                Arg::output(""),
            ]);
            let mut h = key_hasher(inp, Tool::Nvcc);
            h.field("headers", inp.header_listing);
            hash_args(&mut h, &args, &mut digests)?;
            let key = h.finish_key();
            let stem = sanitize(&file_stem(src));
            let id = *by_key
                .entry((stem.clone(), key.clone()))
                .or_insert_with(|| {
                    plan.jobs.push(PtxJob {
                        args,
                        key,
                        stem,
                        what: format!("PTX of {shown} (module `{}`)", m.name),
                    });
                    plan.jobs.len() - 1
                });
            ids.push(id);
        }
        plan.modules.push(ids);
    }
    Ok(plan)
}

/// Plans the AOT jobs, given each module's PTX files (from [`plan_ptx`], resolved); also says
/// what each module embeds.
pub(crate) fn plan_aot(
    inp: &PlanInputs<'_>,
    modules: &[ModuleSpec],
    ptx: &[Vec<PathBuf>],
) -> Result<Plan, Error> {
    let mut p = Planner {
        inp,
        plan: Plan::default(),
        by_output: HashMap::new(),
        digests: HashMap::new(),
    };
    for (m, ptx) in modules.iter().zip(ptx) {
        let mp = p.module(m, ptx)?;
        p.plan.modules.push(mp);
    }
    Ok(p.plan)
}

struct Planner<'a> {
    inp: &'a PlanInputs<'a>,
    plan: Plan,
    by_output: HashMap<PathBuf, usize>,
    digests: HashMap<PathBuf, [u8; 32]>,
}

impl Planner<'_> {
    fn module(&mut self, m: &ModuleSpec, ptx: &[PathBuf]) -> Result<ModulePlan, Error> {
        let inp = self.inp;
        let single = m.sources.len() == 1;
        let mut mp = ModulePlan {
            fatbin: None,
            ptx_blobs: inp.mode == Mode::Jit || (inp.mode == Mode::AotJit && !single),
            ptx_in_fatbin: inp.mode == Mode::AotJit && single,
        };
        if !inp.mode.aot() {
            return Ok(mp);
        }
        let mut images = Vec::new();
        for &arch in inp.archs {
            let cubins: Vec<usize> = ptx
                .iter()
                .zip(&m.sources)
                .map(|(p, (_, shown))| self.ptxas(m, p, shown, arch))
                .collect::<Result<_, _>>()?;
            let linked = self.nvlink(m, &cubins, arch)?;
            let out = self.plan.jobs[linked].output.clone();
            images.push((
                format!("--image3=kind=elf,sm={arch},file="),
                out,
                Some(linked),
            ));
        }
        if mp.ptx_in_fatbin {
            let prefix = format!("--image3=kind=ptx,sm={},file=", inp.ptx_arch);
            images.push((prefix, ptx[0].clone(), None));
        }
        let mut args = vec![Arg::lit("--64")];
        if !inp.compress {
            args.push(Arg::lit("--compress=false"));
        }
        args.push(Arg::output("--create="));
        let mut deps = Vec::new();
        for (prefix, path, job) in images {
            let by = if job.is_some() {
                HashBy::Name
            } else {
                HashBy::Content
            };
            args.push(Arg::input(&prefix, &path, by));
            deps.extend(job);
        }
        let what = format!("the fatbin of module `{}`", m.name);
        mp.fatbin = Some(self.add(Tool::Fatbinary, args, deps, &m.name, "fatbin", what)?);
        Ok(mp)
    }

    /// `ptxas -c -arch=sm_XX flags.. in.ptx -o out.cubin` (relocatable)
    fn ptxas(
        &mut self,
        m: &ModuleSpec,
        ptx: &Path,
        shown: &str,
        arch: u32,
    ) -> Result<usize, Error> {
        let mut args = vec![Arg::lit("-c"), Arg::lit(format!("-arch=sm_{arch}"))];
        args.extend(self.inp.ptxas_flags.iter().map(Arg::lit));
        args.extend([
            Arg::input("", ptx, HashBy::Content),
            Arg::lit("-o"),
            Arg::output(""),
        ]);
        let stem = format!("{}.sm_{arch}", file_stem(Path::new(shown)));
        let what = format!("sm_{arch} code of {shown} (module `{}`)", m.name);
        self.add(Tool::Ptxas, args, vec![], &stem, "cubin", what)
    }

    /// `nvlink -arch=sm_XX a.cubin b.cubin -o module.sm_XX.cubin`
    fn nvlink(&mut self, m: &ModuleSpec, cubins: &[usize], arch: u32) -> Result<usize, Error> {
        let mut args = vec![Arg::lit(format!("-arch=sm_{arch}"))];
        for &c in cubins {
            let cubin = self.plan.jobs[c].output.clone();
            args.push(Arg::input("", &cubin, HashBy::Name));
        }
        args.extend([Arg::lit("-o"), Arg::output("")]);
        let stem = format!("{}.sm_{arch}", m.name);
        let what = format!("the sm_{arch} link of module `{}`", m.name);
        self.add(Tool::Nvlink, args, cubins.to_vec(), &stem, "cubin", what)
    }

    /// Adds a job unless one with the same output (= stem and key) exists; returns its index.
    fn add(
        &mut self,
        tool: Tool,
        args: Vec<Arg>,
        deps: Vec<usize>,
        stem: &str,
        ext: &str,
        what: String,
    ) -> Result<usize, Error> {
        let mut h = key_hasher(self.inp, tool);
        hash_args(&mut h, &args, &mut self.digests)?;
        let key = h.finish_key();
        let output = self
            .inp
            .cache_dir
            .join(format!("{}.{key}.{ext}", sanitize(stem)));
        if let Some(&i) = self.by_output.get(&output) {
            return Ok(i);
        }
        self.plan.jobs.push(Job {
            tool,
            args,
            output: output.clone(),
            deps,
            what,
        });
        let i = self.plan.jobs.len() - 1;
        self.by_output.insert(output, i);
        Ok(i)
    }
}

fn key_hasher(inp: &PlanInputs<'_>, tool: Tool) -> KeyHasher {
    let mut h = KeyHasher::new();
    h.field("tool", tool.name().as_bytes());
    h.field("toolkit", inp.toolkit_version.as_bytes());
    h
}

/// Hashes a command line: literals as is, the output by its prefix only, inputs as their
/// [`HashBy`] says.
fn hash_args(
    h: &mut KeyHasher,
    args: &[Arg],
    digests: &mut HashMap<PathBuf, [u8; 32]>,
) -> Result<(), Error> {
    for a in args {
        match a {
            Arg::Lit(s) => h.field("arg", s.to_string_lossy().as_bytes()),
            Arg::Output { prefix } => h.field("out", prefix.as_bytes()),
            Arg::Input { prefix, path, by } => {
                h.field("in", prefix.as_bytes());
                if *by == HashBy::Name {
                    let name = path.file_name().unwrap_or_default();
                    h.field("name", name.to_string_lossy().as_bytes());
                    continue;
                }
                if *by == HashBy::PathAndContent {
                    h.field("path", path.to_string_lossy().as_bytes());
                }
                let d = match digests.get(path) {
                    Some(d) => *d,
                    None => {
                        let d = file_digest(path)?;
                        digests.insert(path.clone(), d);
                        d
                    }
                };
                h.field("content", &d);
            }
        }
    }
    Ok(())
}

fn file_stem(p: &Path) -> String {
    p.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "src".into())
}

/// Keeps file names portable: anything but `[A-Za-z0-9_.-]` becomes `_`.
pub(crate) fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
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
        has("fatbinary --64 --create=pair.K.fatbin --image3=kind=elf,sm=80,file=pair.sm_80.K.cubin \
             --image3=kind=elf,sm=90,file=pair.sm_90.K.cubin");
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
}
