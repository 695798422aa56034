//! The content-addressed cache: key hashing, the cache directory, atomic writes.
//!
//! Every output file is named `<stem>.<key>.<ext>`, where `<key>` is a SHA-256 (first 96 bits,
//! hex) over the tool, the toolkit version, the command line without the output path, and the
//! contents of every input. Inputs that are themselves cache outputs are represented by their
//! file name, which already holds their key, so a whole build's file names are known before any
//! tool runs, and an output that exists is up to date by construction.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use sha2::{Digest, Sha256};

use crate::error::Error;

/// Bumped whenever the key layout or the commands change meaning, to orphan old entries.
const KEY_DOMAIN: &str = "fatbuild-cache-v1";

/// Hex digits of the key kept in file names (96 bits).
const KEY_HEX_LEN: usize = 24;

/// Builds a cache key from length-prefixed, tagged fields (so field boundaries cannot blur).
pub(crate) struct KeyHasher(Sha256);

impl KeyHasher {
    pub(crate) fn new() -> KeyHasher {
        let mut h = KeyHasher(Sha256::new());
        h.field("domain", KEY_DOMAIN.as_bytes());
        h
    }

    pub(crate) fn field(&mut self, tag: &str, bytes: &[u8]) {
        for part in [tag.as_bytes(), bytes] {
            self.0.update((part.len() as u64).to_le_bytes());
            self.0.update(part);
        }
    }

    /// The short hex key used in file names.
    pub(crate) fn finish_key(self) -> String {
        let mut s = hex(&self.0.finalize());
        s.truncate(KEY_HEX_LEN);
        s
    }
}

/// Lower-case hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

/// SHA-256 of a file's contents.
pub(crate) fn file_digest(path: &Path) -> Result<[u8; 32], Error> {
    let data = fs::read(path).map_err(|e| Error::io("reading", path, e))?;
    Ok(Sha256::digest(&data).into())
}

/// Every file under `dir`, recursively, sorted, skipping hidden entries (symlinked files are
/// followed, symlinked directories are not, so cycles cannot occur).
pub(crate) fn files_under(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = fs::read_dir(&d).map_err(|e| Error::io("listing", &d, e))?;
        for entry in entries {
            let entry = entry.map_err(|e| Error::io("listing", &d, e))?;
            let path = entry.path();
            let ty = entry
                .file_type()
                .map_err(|e| Error::io("inspecting", &path, e))?;
            if ty.is_dir() {
                stack.push(path);
            } else if ty.is_file() || (ty.is_symlink() && path.is_file()) {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The default cache directory for a build script's `OUT_DIR`.
///
/// `OUT_DIR` is `<target>/[<triple>/]<profile>/build/<pkg>-<hash>/out`; the cache goes next to
/// the profile directory (`<target>/[<triple>/]fatbuild-cache`), where every profile and every
/// feature combination of every package shares it. Any other shape: `OUT_DIR/fatbuild-cache`.
pub(crate) fn default_cache_dir(out_dir: &Path) -> PathBuf {
    let up = |p: &Path| p.parent().map(Path::to_path_buf);
    let named = |p: &Path, n: &str| p.file_name().is_some_and(|f| f == n);
    let walk = || -> Option<PathBuf> {
        if !named(out_dir, "out") {
            return None;
        }
        let pkg = up(out_dir)?;
        let build = up(&pkg)?;
        if !named(&build, "build") {
            return None;
        }
        let profile = up(&build)?;
        let target = up(&profile)?;
        (target.as_os_str().len() > 1).then(|| target.join("fatbuild-cache"))
    };
    walk().unwrap_or_else(|| out_dir.join("fatbuild-cache"))
}

/// A unique temporary sibling of `path` that keeps its extension (`a.b.ptx` → `a.b.tmp7-3.ptx`),
/// since some tools look at the output's extension.
pub(crate) fn temp_path_for(path: &Path) -> PathBuf {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let tag = format!("tmp{}-{n}", std::process::id());
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned());
    let name = match (stem, path.extension()) {
        (Some(stem), Some(ext)) => format!("{stem}.{tag}.{}", ext.to_string_lossy()),
        (Some(stem), None) => format!("{stem}.{tag}"),
        _ => tag,
    };
    path.with_file_name(name)
}

/// Writes `data` to `path` through a temporary file and a rename, so readers (and concurrent
/// builds) see either nothing or the whole file. Leaves an identical file untouched.
pub(crate) fn write_atomic(path: &Path, data: &[u8]) -> Result<(), Error> {
    if fs::read(path).is_ok_and(|old| old == data) {
        return Ok(());
    }
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(|e| Error::io("creating directory", dir, e))?;
    }
    let tmp = temp_path_for(path);
    let res = fs::write(&tmp, data).and_then(|()| fs::rename(&tmp, path));
    res.map_err(|e: io::Error| {
        let _ = fs::remove_file(&tmp);
        Error::io("writing", path, e)
    })
}

/// A fresh, empty directory for a unit test.
#[cfg(test)]
pub(crate) fn test_dir(name: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let d = std::env::temp_dir().join(format!(
        "fatbuild-unit-{name}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

/// Writes an executable shell script. The file is created by a `cp` child process, never opened
/// for writing in this one: otherwise a test thread that forks meanwhile (to run a tool) could
/// inherit the write descriptor, and executing the script then fails with ETXTBSY ("Text file
/// busy"), as CI saw once.
#[cfg(all(test, unix))]
pub(crate) fn write_script(path: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    let mut src = path.as_os_str().to_owned();
    src.push(".src");
    let src = std::path::PathBuf::from(src);
    fs::write(&src, body).unwrap();
    let st = std::process::Command::new("cp")
        .arg(&src)
        .arg(path)
        .status()
        .unwrap();
    assert!(st.success(), "cp {} {}", src.display(), path.display());
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_dir_sits_next_to_the_profile_dir() {
        let c = |p: &str| default_cache_dir(Path::new(p));
        assert_eq!(
            c("/w/target/debug/build/warpfft-0123abcd/out"),
            Path::new("/w/target/fatbuild-cache")
        );
        assert_eq!(
            c("/w/target/x86_64-unknown-linux-gnu/release/build/warpfft-0123abcd/out"),
            Path::new("/w/target/x86_64-unknown-linux-gnu/fatbuild-cache")
        );
        // Shapes it does not recognise fall back to OUT_DIR.
        assert_eq!(c("/tmp/out"), Path::new("/tmp/out/fatbuild-cache"));
        assert_eq!(c("/w/gen"), Path::new("/w/gen/fatbuild-cache"));
        assert_eq!(c("/build/x/out"), Path::new("/build/x/out/fatbuild-cache"));
        assert_eq!(c("out"), Path::new("out/fatbuild-cache"));
    }

    #[test]
    fn keys_separate_fields() {
        let key = |fields: &[(&str, &str)]| {
            let mut h = KeyHasher::new();
            for (t, v) in fields {
                h.field(t, v.as_bytes());
            }
            h.finish_key()
        };
        assert_eq!(key(&[("a", "bc")]), key(&[("a", "bc")]));
        assert_ne!(key(&[("a", "bc")]), key(&[("ab", "c")]));
        assert_ne!(key(&[("a", "b"), ("c", "")]), key(&[("a", "bc")]));
        assert_eq!(key(&[]).len(), KEY_HEX_LEN);
    }

    #[test]
    fn temp_paths_keep_the_extension_and_are_unique() {
        let a = temp_path_for(Path::new("/c/sort.0123.ptx"));
        let b = temp_path_for(Path::new("/c/sort.0123.ptx"));
        assert_ne!(a, b);
        assert_eq!(a.extension().unwrap(), "ptx");
        assert_eq!(a.parent().unwrap(), Path::new("/c"));
    }

    #[test]
    fn atomic_write_and_tree_listing() {
        let d = test_dir("cache");
        write_atomic(&d.join("x/y/a.txt"), b"hello").unwrap();
        write_atomic(&d.join("x/b.txt"), b"world").unwrap();
        write_atomic(&d.join("x/b.txt"), b"world").unwrap();
        assert_eq!(fs::read(d.join("x/y/a.txt")).unwrap(), b"hello");
        let files = files_under(&d.join("x")).unwrap();
        assert_eq!(files, [d.join("x/b.txt"), d.join("x/y/a.txt")]);
        assert_eq!(hex(&[0, 0xab, 0xff]), "00abff");
        let _ = fs::remove_dir_all(d);
    }
}
