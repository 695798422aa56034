//! Stage 2, planning: turning the module specs into tool jobs with cache-keyed output paths.
//!
//! Two phases, since what a `.cu` file includes is known only once nvcc has run:
//! [`plan_ptx`] gives each nvcc job a key over its command line and source (the final PTX name
//! adds the contents of the headers nvcc reported, see [`crate::run::resolve_ptx`]);
//! [`plan_aot`] then derives every ptxas/nvlink/fatbinary command and output name from the
//! PTX file names alone. Nothing runs here, and no cache entry is looked at (which outputs
//! already exist is [`crate::run`]'s decision). The tests are in `plan/tests.rs`.

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
    /// The variables of [`NVCC_ENV_VARS`](crate::NVCC_ENV_VARS) that are set, with their
    /// values: nvcc reads them, so they are part of every nvcc key.
    pub(crate) nvcc_env: &'a [(String, String)],
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
            for (var, value) in inp.nvcc_env {
                h.field("env", var.as_bytes());
                h.field("value", value.as_bytes());
            }
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
            ptx_blobs: inp.mode.jit() && (!inp.mode.aot() || !single),
            ptx_in_fatbin: inp.mode.jit() && inp.mode.aot() && single,
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
mod tests;
