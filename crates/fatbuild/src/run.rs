//! Running the planned jobs: only those whose outputs are missing, stage by stage, each stage
//! in parallel.

use std::collections::HashMap;
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::thread;

use crate::cache::{file_digest, temp_path_for, write_atomic, KeyHasher};
use crate::error::{Error, ErrorKind};
use crate::plan::{Arg, Job, Plan, PtxJob, PtxPlan, Tool};
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
    for (i, job) in plan.jobs.iter().enumerate() {
        let hit = read_deps(&job.deps_file(cache_dir)).and_then(|headers| {
            let key = full_key(&job.key, &headers, &digests)?;
            let path = job.ptx_file(cache_dir, &key);
            path.is_file().then_some(PtxOut { path, headers })
        });
        match hit {
            Some(out) => {
                stats.cache_hits += 1;
                outs[i] = Some(out);
            }
            None => misses.push(i),
        }
    }
    let results = run_parallel(&misses, n_threads, |i| {
        compile_ptx(&plan.jobs[i], toolkit, cache_dir, &digests)
    })?;
    for (i, (out, stderr)) in results {
        stats.nvcc += 1;
        if !stderr.trim().is_empty() {
            warn("nvcc", &plan.jobs[i].what, stderr.trim());
        }
        outs[i] = Some(out);
    }
    Ok(outs.into_iter().flatten().collect())
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
    fs::rename(&tmp_ptx, &path)
        .map_err(|e| cleanup(Error::io("moving into the cache", &path, e)))?;
    let mut list = String::from(DEPS_HEADER);
    for h in &headers {
        list.push_str(&h.to_string_lossy());
        list.push('\n');
    }
    write_atomic(&job.deps_file(cache_dir), list.as_bytes())?;
    Ok((PtxOut { path, headers }, stderr))
}

const DEPS_HEADER: &str = "fatbuild-deps-v1\n";

/// The header list of a `.deps` file, or `None` if there is none (or it is not ours).
fn read_deps(path: &Path) -> Option<Vec<PathBuf>> {
    let text = fs::read_to_string(path).ok()?;
    let body = text.strip_prefix(DEPS_HEADER)?;
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
    let mut stack = roots.to_vec();
    while let Some(j) = stack.pop() {
        if std::mem::replace(&mut seen[j], true) {
            continue;
        }
        if plan.jobs[j].output.is_file() {
            stats.cache_hits += 1;
        } else {
            to_run[j] = true;
            stack.extend(&plan.jobs[j].deps);
        }
    }
    for tool in Tool::PIPELINE {
        let stage: Vec<usize> = (0..plan.jobs.len())
            .filter(|&j| to_run[j] && plan.jobs[j].tool == tool)
            .collect();
        let done = run_parallel(&stage, n_threads, |j| run_job(&plan.jobs[j], toolkit))?;
        for (j, stderr) in done {
            stats.count(tool);
            if !stderr.trim().is_empty() {
                warn(tool.name(), &plan.jobs[j].what, stderr.trim());
            }
        }
    }
    Ok(())
}

/// Runs `f` on every item of `items` with up to `n_threads` threads. After the first failure
/// no new item starts, and the failure of the earliest failing item is returned.
fn run_parallel<T: Send>(
    items: &[usize],
    n_threads: usize,
    f: impl Fn(usize) -> Result<T, Error> + Sync,
) -> Result<Vec<(usize, T)>, Error> {
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let results: Mutex<Vec<Option<Result<T, Error>>>> =
        Mutex::new((0..items.len()).map(|_| None).collect());
    let workers = n_threads.clamp(1, items.len().max(1));
    thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= items.len() || failed.load(Ordering::Relaxed) {
                    break;
                }
                let r = f(items[i]);
                if r.is_err() {
                    failed.store(true, Ordering::Relaxed);
                }
                results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
            });
        }
    });
    let results = results.into_inner().unwrap_or_else(|e| e.into_inner());
    let mut done = Vec::new();
    for (&item, r) in items.iter().zip(results) {
        match r {
            Some(Ok(v)) => done.push((item, v)),
            Some(Err(e)) => return Err(e),
            None => {}
        }
    }
    Ok(done)
}

/// Runs one AOT job into a temporary file and renames it into place; returns its output.
fn run_job(job: &Job, toolkit: &Toolkit) -> Result<String, Error> {
    if let Some(dir) = job.output.parent() {
        fs::create_dir_all(dir).map_err(|e| Error::io("creating directory", dir, e))?;
    }
    let tmp = temp_path_for(&job.output);
    let text = run_tool(toolkit, job.tool, &job.args, &tmp, &[], &job.what)?;
    fs::rename(&tmp, &job.output).map_err(|e| {
        let _ = fs::remove_file(&tmp);
        Error::io("moving into the cache", &job.output, e)
    })?;
    Ok(text)
}

/// Runs a tool writing `out`; returns its stdout + stderr. On failure `out` is removed and the
/// error tells the whole story.
fn run_tool(
    toolkit: &Toolkit,
    tool: Tool,
    args: &[Arg],
    out: &Path,
    extra: &[OsString],
    what: &str,
) -> Result<String, Error> {
    if let Some(dir) = out.parent() {
        fs::create_dir_all(dir).map_err(|e| Error::io("creating directory", dir, e))?;
    }
    let program = toolkit.tool(tool.name());
    let mut argv: Vec<OsString> = args.iter().map(|a| a.render(out)).collect();
    argv.extend(extra.iter().cloned());
    let fail = |status: String, output: &str| {
        let _ = fs::remove_file(out);
        tool_error(tool, what, &program, &argv, &status, output)
    };
    let res = Command::new(&program)
        .args(&argv)
        .output()
        .map_err(|e| fail(format!("could not be started: {e}"), ""))?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&res.stdout),
        String::from_utf8_lossy(&res.stderr)
    );
    if !res.status.success() {
        return Err(fail(res.status.to_string(), &text));
    }
    if !out.is_file() {
        return Err(fail("succeeded but wrote no output file".into(), &text));
    }
    Ok(text)
}

/// The error for a failed tool: what, the command, the status, its output and the fix.
fn tool_error(
    tool: Tool,
    what: &str,
    program: &Path,
    args: &[OsString],
    status: &str,
    output: &str,
) -> Error {
    let fix = match tool {
        Tool::Nvcc => {
            "correct the CUDA source at the location named above (flags from nvcc_flags / the \
             flags environment variable are part of the command; run it by hand to reproduce)"
        }
        Tool::Ptxas => {
            "ptxas rejected the PTX for this arch: check the arch list and the ptxas flags, or \
             that the PTX arch is not newer than the target arch"
        }
        Tool::Nvlink => {
            "an undefined reference means a __device__ function lives in a source that is not \
             part of this module: add that file with Module::source"
        }
        Tool::Fatbinary => {
            "fatbinary should not fail on files ptxas/nvlink wrote; check the toolkit \
             installation and rerun the command by hand"
        }
    };
    let output = if output.trim().is_empty() {
        "  (no output)".to_string()
    } else {
        output
            .trim_end()
            .lines()
            .map(|l| format!("  {l}"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    Error::new(
        ErrorKind::ToolFailed,
        format!(
            "fatbuild: {} failed building {} ({status})\ncommand: {}\noutput:\n{output}\nfix: \
             {fix}",
            tool.name(),
            what,
            command_line(program, args)
        ),
    )
}

/// A shell-pasteable rendering of a command.
pub(crate) fn command_line(program: &Path, args: &[OsString]) -> String {
    let quote = |s: &str| {
        let plain = !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_=+.,/:@%".contains(c));
        if plain {
            s.to_string()
        } else {
            format!("'{}'", s.replace('\'', "'\\''"))
        }
    };
    std::iter::once(program.as_os_str())
        .chain(args.iter().map(|a| a.as_os_str()))
        .map(|a| quote(&a.to_string_lossy()))
        .collect::<Vec<_>>()
        .join(" ")
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

    #[test]
    fn command_lines_are_quoted_for_the_shell() {
        let args: Vec<OsString> = ["-DX=1", "a b.cu", "it's", ""]
            .iter()
            .map(OsString::from)
            .collect();
        assert_eq!(
            command_line(Path::new("/cuda/bin/nvcc"), &args),
            "/cuda/bin/nvcc -DX=1 'a b.cu' 'it'\\''s' ''"
        );
    }
}
