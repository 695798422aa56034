//! Spawning the CUDA tools: one command into a given output path with its output captured and,
//! on failure, an error that tells the whole story (what, command line, status, output, fix);
//! and the thread pool that runs a stage's commands in parallel. This is the only place a
//! process is started (besides the toolkit's and `native`'s queries); which commands run, and
//! where their outputs are filed in the cache, is decided by [`crate::run`].

use std::ffi::OsString;
use std::fs;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::thread;

use crate::error::{Error, ErrorKind};
use crate::plan::{Arg, Tool};
use crate::toolkit::Toolkit;

/// Runs `f` on every item of `items` with up to `n_threads` threads. After the first failure
/// no new item starts, and the failure of the earliest failing item is returned.
pub(crate) fn run_parallel<T: Send>(
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

/// Runs a tool writing `out`; returns its stdout + stderr. On failure `out` is removed and the
/// error tells the whole story.
pub(crate) fn run_tool(
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
    let missing = missing_program(output);
    let incomplete;
    let fix = match tool {
        _ if missing.is_some() => {
            incomplete = format!(
                "{} could not start `{}`, a program of the CUDA toolkit ({} is the toolkit's \
                 bin directory; nvcc runs cicc from ../nvvm/bin): the toolkit is incomplete. \
                 Install the complete toolkit (nvcc, its nvvm directory, ptxas, nvlink, \
                 fatbinary), or point NVCC/CUDA_PATH at one",
                tool.name(),
                missing.unwrap_or_default(),
                program.parent().unwrap_or(Path::new("/")).display()
            );
            incomplete.as_str()
        }
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

/// The program a tool (or the shell nvcc runs its steps with) reported as missing: `sh: 1:
/// cicc: not found`, `cicc: command not found`, `/x/nvvm/bin/cicc: No such file or directory`.
fn missing_program(output: &str) -> Option<String> {
    output.lines().find_map(|l| {
        let l = l.trim();
        let rest = l
            .strip_suffix(": not found")
            .or_else(|| l.strip_suffix(": command not found"))
            .or_else(|| l.strip_suffix(": No such file or directory"))?;
        let name = rest.rsplit(": ").next()?.trim();
        (!name.is_empty() && !name.contains(' ')).then(|| name.to_string())
    })
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
    fn missing_programs_are_recognised() {
        let m = |s: &str| missing_program(s);
        assert_eq!(m("sh: 1: cicc: not found\n").as_deref(), Some("cicc"));
        assert_eq!(m("x\nsh: cicc: command not found").as_deref(), Some("cicc"));
        let p = "sh: /c/nvvm/bin/cicc: No such file or directory";
        assert_eq!(m(p).as_deref(), Some("/c/nvvm/bin/cicc"));
        assert_eq!(m("a.cu(1): error: identifier \"y\" is undefined"), None);
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
