//! Stage 3, running the plan: [`compile`] alternates planning ([`crate::plan`]) and running,
//! since the AOT jobs are named after the PTX files. Every cache hit is decided here, before
//! anything runs: a PTX file by its `.deps` list and the header contents ([`resolve_ptx`]), an
//! AOT output by its name ([`execute`]; a hit cuts off everything feeding it); and every hit
//! by its contents matching the digest filed beside it ([`crate::cache::check_entry`]). Only
//! the misses run, stage by stage, each stage in parallel, through [`crate::spawn`]; their
//! outputs are written under temporary names and renamed into the cache here.

use std::collections::{BTreeSet, HashMap};
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::cache::{
    self, check_entry, file_digest, store, temp_path_for, touch_used, write_atomic, Entry,
    KeyHasher,
};
use crate::error::{Error, ErrorKind};
use crate::plan::{self, Job, ModuleSpec, Plan, PlanInputs, PtxJob, PtxPlan, Tool};
use crate::spawn::{run_parallel, run_tool};
use crate::toolkit::Toolkit;

/// How much work a build did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// nvcc runs (one per source and define set whose PTX was not cached).
    pub nvcc: usize,
    /// ptxas runs (one per source and arch).
    pub ptxas: usize,
    /// nvlink runs (one per module and arch).
    pub nvlink: usize,
    /// fatbinary runs (one per module).
    pub fatbinary: usize,
    /// Outputs found in the cache (their tools, and the tools feeding them, did not run).
    pub cache_hits: usize,
}

impl Stats {
    /// All tool runs together; 0 for a fully cached build.
    pub fn tools_run(&self) -> usize {
        self.nvcc + self.ptxas + self.nvlink + self.fatbinary
    }

    pub(crate) fn count(&mut self, tool: Tool) {
        match tool {
            Tool::Nvcc => self.nvcc += 1,
            Tool::Ptxas => self.ptxas += 1,
            Tool::Nvlink => self.nvlink += 1,
            Tool::Fatbinary => self.fatbinary += 1,
        }
    }
}

/// The compiled build: each module's PTX files and the AOT plan (whose outputs all exist).
pub(crate) struct Built {
    pub(crate) ptx_paths: Vec<Vec<PathBuf>>,
    pub(crate) plan: Plan,
    pub(crate) stats: Stats,
}

/// Phase 1, PTX for every source (also for AOT: kernel names come from it), then phase 2,
/// ptxas/nvlink/fatbinary, `jobs` tools at a time. Tool warnings and the non-system headers
/// the sources included (beyond `headers`, already announced) go to `cargo`.
pub(crate) fn compile(
    inputs: &PlanInputs<'_>,
    specs: &[ModuleSpec],
    toolkit: &Toolkit,
    headers: &[PathBuf],
    jobs: usize,
    cargo: &mut Vec<String>,
) -> Result<Built, Error> {
    let mut stats = Stats::default();
    let mut warnings = Vec::new();
    let mut warn = |tool: &str, what: &str, text: &str| {
        for l in text.lines() {
            warnings.push(format!("warning={tool} ({what}): {l}"));
        }
    };
    let ptx_plan = plan::plan_ptx(inputs, specs)?;
    let cache_dir = inputs.cache_dir;
    let ptx = resolve_ptx(&ptx_plan, toolkit, cache_dir, jobs, &mut stats, &mut warn);
    if let Ok(outs) = &ptx {
        let toolkit_root = toolkit.bin_dir().parent().unwrap_or(Path::new("/"));
        let extra: BTreeSet<&PathBuf> = outs
            .iter()
            .flat_map(|o| &o.headers)
            .filter(|h| {
                !(h.starts_with("/usr/include")
                    || h.starts_with("/usr/lib")
                    || h.starts_with(toolkit_root)
                    || headers.contains(h)
                    || specs_have(specs, h))
            })
            .collect();
        cargo.extend(
            extra
                .iter()
                .map(|f| format!("rerun-if-changed={}", f.display())),
        );
    }
    let res = ptx.and_then(|ptx| {
        let ptx_paths: Vec<Vec<PathBuf>> = ptx_plan
            .modules
            .iter()
            .map(|ids| ids.iter().map(|&i| ptx[i].path.clone()).collect())
            .collect();
        let plan = plan::plan_aot(inputs, specs, &ptx_paths)?;
        let roots: Vec<usize> = plan.modules.iter().filter_map(|m| m.fatbin).collect();
        execute(&plan, &roots, toolkit, jobs, &mut stats, &mut warn)?;
        Ok((ptx_paths, plan))
    });
    cargo.append(&mut warnings);
    let (ptx_paths, plan) = res?;
    Ok(Built {
        ptx_paths,
        plan,
        stats,
    })
}

/// Whether `p` is one of the sources.
fn specs_have(specs: &[ModuleSpec], p: &Path) -> bool {
    specs.iter().flat_map(|m| &m.sources).any(|(s, _)| s == p)
}

/// The PTX of one nvcc job: its file and the headers it included.
#[derive(Debug, Clone)]
pub(crate) struct PtxOut {
    pub(crate) path: PathBuf,
    pub(crate) headers: Vec<PathBuf>,
}

/// Content digests shared by the jobs of one build (`None`: the file is gone).
type Digests = Mutex<HashMap<PathBuf, Option<[u8; 32]>>>;

/// Makes the PTX of every nvcc job exist. A job's PTX is named by a key over the job's key and
/// the contents of the headers its last compilation included (from nvcc's `-MD` output, kept
/// in `<stem>.<key>.deps`), so editing a header recompiles exactly the sources that include
/// it. All of them count, toolkit and system headers too (hashed once per build).
pub(crate) fn resolve_ptx(
    plan: &PtxPlan,
    toolkit: &Toolkit,
    cache_dir: &Path,
    n_threads: usize,
    stats: &mut Stats,
    warn: &mut dyn FnMut(&str, &str, &str),
) -> Result<Vec<PtxOut>, Error> {
    let digests: Digests = Mutex::new(HashMap::new());
    let mut outs: Vec<Option<PtxOut>> = vec![None; plan.jobs.len()];
    let mut misses = Vec::new();
    let all: Vec<usize> = (0..plan.jobs.len()).collect();
    let found = run_parallel(&all, n_threads, |i| {
        Ok(find_ptx(&plan.jobs[i], cache_dir, &digests))
    })?;
    for (i, found) in found {
        match found {
            Found::Hit(out) => {
                stats.cache_hits += 1;
                outs[i] = Some(out);
            }
            Found::Miss => misses.push(i),
            Found::Corrupt(path, why) => {
                warn("fatbuild", &plan.jobs[i].what, &corrupt_note(&path, &why));
                misses.push(i);
            }
        }
    }
    let results = run_parallel(&misses, n_threads, |i| {
        build_ptx(&plan.jobs[i], toolkit, cache_dir, &digests)
    })?;
    for (i, (out, stderr)) in results {
        outs[i] = Some(out);
        let Some(stderr) = stderr else {
            stats.cache_hits += 1; // another build made it meanwhile
            continue;
        };
        stats.nvcc += 1;
        if !stderr.trim().is_empty() {
            warn("nvcc", &plan.jobs[i].what, stderr.trim());
        }
    }
    Ok(outs.into_iter().flatten().collect())
}

/// A cache lookup's result.
enum Found<T> {
    Hit(T),
    Miss,
    /// The entry existed but failed its digest check (and was removed): the path and why.
    Corrupt(PathBuf, String),
}

/// Looks a PTX job up in the cache: its `.deps` list names the headers, whose contents
/// complete the key; the PTX file so named must match its digest.
fn find_ptx(job: &PtxJob, cache_dir: &Path, digests: &Digests) -> Found<PtxOut> {
    let deps = job.deps_file(cache_dir);
    let Some(headers) = read_deps(&deps) else {
        return Found::Miss;
    };
    let Some(key) = full_key(&job.key, &headers, digests) else {
        return Found::Miss;
    };
    let path = job.ptx_file(cache_dir, &key);
    match check(&path) {
        Found::Hit(()) => {
            touch_used(&deps);
            Found::Hit(PtxOut { path, headers })
        }
        Found::Miss => Found::Miss,
        Found::Corrupt(p, why) => Found::Corrupt(p, why),
    }
}

/// Checks one cache output. A corrupt one stays until its rebuild replaces it (under the
/// claim, so a concurrent build never removes what another just filed).
fn check(path: &Path) -> Found<()> {
    match check_entry(path) {
        Entry::Valid => Found::Hit(()),
        Entry::Missing => Found::Miss,
        Entry::Corrupt(why) => Found::Corrupt(path.to_path_buf(), why),
    }
}

/// The claim file of a cache entry: `<entry>.lock`.
fn lock_path(entry: &Path) -> PathBuf {
    let mut s = entry.as_os_str().to_owned();
    s.push(".lock");
    PathBuf::from(s)
}

/// Makes the PTX of one job exist, under the job's claim: if another build holds it, waits and
/// looks again. Returns nvcc's output, or `None` when another build made the PTX.
fn build_ptx(
    job: &PtxJob,
    toolkit: &Toolkit,
    cache_dir: &Path,
    digests: &Digests,
) -> Result<(PtxOut, Option<String>), Error> {
    let lock = lock_path(&job.deps_file(cache_dir));
    loop {
        let claim = cache::claim(&lock)?;
        if let Found::Hit(out) = find_ptx(job, cache_dir, digests) {
            return Ok((out, None));
        }
        if let Some(claim) = claim {
            let res = compile_ptx(job, toolkit, cache_dir, digests);
            drop(claim);
            return res.map(|(out, stderr)| (out, Some(stderr)));
        }
    }
}

/// The one-line warning for a corrupt cache entry.
fn corrupt_note(path: &Path, why: &str) -> String {
    format!(
        "cache entry {} failed its integrity check ({why}); rebuilding it",
        path.display()
    )
}

/// Runs nvcc for one job with `-MD -MF`, then files the PTX under its full key.
fn compile_ptx(
    job: &PtxJob,
    toolkit: &Toolkit,
    cache_dir: &Path,
    digests: &Digests,
) -> Result<(PtxOut, String), Error> {
    let tmp_ptx = temp_path_for(&job.ptx_file(cache_dir, &job.key));
    let tmp_deps = temp_path_for(&job.deps_file(cache_dir));
    let extra = [
        OsString::from("-MD"),
        OsString::from("-MF"),
        tmp_deps.clone().into(),
    ];
    let stderr = run_tool(toolkit, Tool::Nvcc, &job.args, &tmp_ptx, &extra, &job.what);
    let deps_text = fs::read_to_string(&tmp_deps);
    let _ = fs::remove_file(&tmp_deps);
    let stderr = stderr?;
    let cleanup = |e: Error| {
        let _ = fs::remove_file(&tmp_ptx);
        e
    };
    let deps_text = deps_text.map_err(|e| cleanup(Error::io("reading nvcc's", &tmp_deps, e)))?;
    let cwd = std::env::current_dir().unwrap_or_default();
    let mut headers: Vec<PathBuf> = Vec::new();
    for d in parse_make_deps(&deps_text) {
        let d = if d.is_absolute() { d } else { cwd.join(d) };
        if !headers.contains(&d) {
            headers.push(d);
        }
    }
    let key = full_key(&job.key, &headers, digests).ok_or_else(|| {
        cleanup(Error::new(
            ErrorKind::Io,
            format!(
                "fatbuild: a file {} included vanished during the build",
                job.what
            ),
        ))
    })?;
    let path = job.ptx_file(cache_dir, &key);
    store(&tmp_ptx, &path)?;
    let mut list = String::from(DEPS_HEADER);
    for h in &headers {
        list.push_str(&h.to_string_lossy());
        list.push('\n');
    }
    list.push_str(DEPS_END);
    write_atomic(&job.deps_file(cache_dir), list.as_bytes())?;
    Ok((PtxOut { path, headers }, stderr))
}

const DEPS_HEADER: &str = "fatbuild-deps-v2\n";
/// The last line of a `.deps` file: a truncated list (which would leave headers out of the
/// key) lacks it and is ignored.
const DEPS_END: &str = "end\n";

/// The header list of a `.deps` file, or `None` if there is none (or it is not ours, or it
/// is truncated).
fn read_deps(path: &Path) -> Option<Vec<PathBuf>> {
    let text = fs::read_to_string(path).ok()?;
    let body = text.strip_prefix(DEPS_HEADER)?.strip_suffix(DEPS_END)?;
    Some(
        body.lines()
            .filter(|l| !l.is_empty())
            .map(PathBuf::from)
            .collect(),
    )
}

/// The key of a PTX file: the job's key plus every header's path and content; `None` when a
/// header no longer exists (then the job must run again).
fn full_key(job_key: &str, headers: &[PathBuf], digests: &Digests) -> Option<String> {
    let mut h = KeyHasher::new();
    h.field("job", job_key.as_bytes());
    for p in headers {
        let cached = digests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(p)
            .copied();
        let d = match cached {
            Some(d) => d,
            None => {
                let d = file_digest(p).ok();
                digests
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(p.clone(), d);
                d
            }
        }?;
        h.field("header", p.to_string_lossy().as_bytes());
        h.field("content", &d);
    }
    Some(h.finish_key())
}

/// The prerequisites of a make rule as nvcc `-MD` writes it (`out : a.cu \` + one per line),
/// with `\ ` unescaped to a space.
pub(crate) fn parse_make_deps(text: &str) -> Vec<PathBuf> {
    let joined = text.replace("\\\r\n", " ").replace("\\\n", " ");
    let mut out = Vec::new();
    for rule in joined.lines() {
        let Some(colon) = rule
            .find(": ")
            .or_else(|| rule.strip_suffix(':').map(|r| r.len()))
        else {
            continue;
        };
        let mut word = String::new();
        let mut chars = rule[colon + 1..].chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' if chars.peek() == Some(&' ') => {
                    word.push(' ');
                    chars.next();
                }
                c if c.is_whitespace() => {
                    if !word.is_empty() {
                        out.push(PathBuf::from(std::mem::take(&mut word)));
                    }
                }
                c => word.push(c),
            }
        }
        if !word.is_empty() {
            out.push(PathBuf::from(word));
        }
    }
    out
}

/// Makes the outputs of `roots` exist, running what is missing (a cached output cuts off
/// everything that feeds it). Stderr of successful runs (warnings) goes to `warn`.
pub(crate) fn execute(
    plan: &Plan,
    roots: &[usize],
    toolkit: &Toolkit,
    n_threads: usize,
    stats: &mut Stats,
    warn: &mut dyn FnMut(&str, &str, &str),
) -> Result<(), Error> {
    let mut to_run = vec![false; plan.jobs.len()];
    let mut seen = vec![false; plan.jobs.len()];
    // Level by level from the roots, each level's entries checked in parallel.
    let mut level: Vec<usize> = Vec::new();
    for &j in roots {
        if !std::mem::replace(&mut seen[j], true) {
            level.push(j);
        }
    }
    while !level.is_empty() {
        let found = run_parallel(&level, n_threads, |j| Ok(check(&plan.jobs[j].output)))?;
        let mut next = Vec::new();
        for (j, found) in found {
            if let Found::Corrupt(path, why) = &found {
                warn("fatbuild", &plan.jobs[j].what, &corrupt_note(path, why));
            }
            if let Found::Hit(()) = found {
                stats.cache_hits += 1;
                continue;
            }
            to_run[j] = true;
            for &d in &plan.jobs[j].deps {
                if !std::mem::replace(&mut seen[d], true) {
                    next.push(d);
                }
            }
        }
        level = next;
    }
    for tool in Tool::PIPELINE {
        let stage: Vec<usize> = (0..plan.jobs.len())
            .filter(|&j| to_run[j] && plan.jobs[j].tool == tool)
            .collect();
        let done = run_parallel(&stage, n_threads, |j| run_job(&plan.jobs[j], toolkit))?;
        for (j, stderr) in done {
            let Some(stderr) = stderr else {
                stats.cache_hits += 1; // another build made it meanwhile
                continue;
            };
            stats.count(tool);
            if !stderr.trim().is_empty() {
                warn(tool.name(), &plan.jobs[j].what, stderr.trim());
            }
        }
    }
    Ok(())
}

/// Runs one AOT job, under its output's claim (if another build holds it, waits and looks
/// again), into a temporary file filed into the cache; returns the tool's output, or `None`
/// when another build made the file.
fn run_job(job: &Job, toolkit: &Toolkit) -> Result<Option<String>, Error> {
    let lock = lock_path(&job.output);
    loop {
        let claim = cache::claim(&lock)?;
        if let Found::Hit(()) = check(&job.output) {
            return Ok(None);
        }
        if let Some(claim) = claim {
            let tmp = temp_path_for(&job.output);
            let res = run_tool(toolkit, job.tool, &job.args, &tmp, &[], &job.what)
                .and_then(|text| store(&tmp, &job.output).map(|()| text));
            drop(claim);
            return res.map(Some);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn make_deps_are_parsed() {
        let text = "/c/x.tmp1-0.ptx : /k/a.cu \\\n    /usr/include/stdc-predef.h \\\n    \
                    /k/my\\ dir/h.cuh \\\n    rel.cuh\n\n";
        let got = parse_make_deps(text);
        let want = [
            "/k/a.cu",
            "/usr/include/stdc-predef.h",
            "/k/my dir/h.cuh",
            "rel.cuh",
        ];
        assert_eq!(got, want.iter().map(PathBuf::from).collect::<Vec<_>>());
        assert!(parse_make_deps("").is_empty());
    }
}
