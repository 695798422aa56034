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
const KEY_DOMAIN: &str = "fatbuild-cache-v2";

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

/// What the digest file beside a cache entry starts with (its format's version).
const SUM_HEADER: &str = "fatbuild-sum-v1";

/// The digest file kept beside a cache output: `<output>.sum`, holding [`SUM_HEADER`], the
/// output's SHA-256 and its length.
pub(crate) fn sum_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".sum");
    PathBuf::from(s)
}

/// The state of a cache entry (an output and its digest file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Entry {
    /// The output exists and matches its digest.
    Valid,
    /// The output does not exist.
    Missing,
    /// The output exists but cannot be trusted (the reason, for the warning).
    Corrupt(String),
}

/// Checks a cache output against the digest stored beside it. Every cache hit goes through
/// here: an entry is trusted for its contents, never for existing (a truncated or altered
/// file, or a zero-length one left by a crash, is [`Entry::Corrupt`]). A valid entry is marked
/// as used (its digest file's time), which the size bound's eviction goes by.
pub(crate) fn check_entry(path: &Path) -> Entry {
    let Ok(data) = fs::read(path) else {
        return Entry::Missing;
    };
    let sum = sum_path(path);
    let Ok(text) = fs::read_to_string(&sum) else {
        return Entry::Corrupt("it has no digest file".into());
    };
    let want = sum_text(&data);
    if text != want {
        let len = |t: &str| t.split_whitespace().nth(2).map(str::to_string);
        let reason = match len(&text) {
            Some(n) if n != data.len().to_string() => {
                format!("{} bytes where {n} were stored", data.len())
            }
            Some(_) => "its contents differ from the stored digest".to_string(),
            None => "its digest file is damaged".to_string(),
        };
        return Entry::Corrupt(reason);
    }
    touch_used(&sum);
    Entry::Valid
}

/// The text of a digest file for `data`.
fn sum_text(data: &[u8]) -> String {
    format!(
        "{SUM_HEADER} {} {}\n",
        hex(&Sha256::digest(data)),
        data.len()
    )
}

/// Marks an entry as used now by rewriting its digest file (at most once an hour, so that
/// fully cached builds stay read-only in practice).
fn touch_used(sum: &Path) {
    let fresh = fs::metadata(sum)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|age| age < std::time::Duration::from_secs(3600));
    if !fresh {
        if let Ok(text) = fs::read(sum) {
            let _ = write_file_atomic(sum, &text, false);
        }
    }
}

/// Files a tool's output (written to `tmp`) into the cache as `path`: the data is synced to
/// disk, its digest file written (synced, renamed into place), and only then the output
/// renamed into place. A crash at any point leaves at worst an entry that
/// [`check_entry`] rejects. Concurrent builds filing the same entry write identical files.
pub(crate) fn store(tmp: &Path, path: &Path) -> Result<(), Error> {
    let fail = |what: &str, p: &Path, e: io::Error| {
        let _ = fs::remove_file(tmp);
        Error::io(what, p, e)
    };
    let data = fs::read(tmp).map_err(|e| fail("reading", tmp, e))?;
    fs::File::open(tmp)
        .and_then(|f| f.sync_all())
        .map_err(|e| fail("syncing", tmp, e))?;
    let sum = sum_path(path);
    if let Err(e) = write_file_atomic(&sum, sum_text(&data).as_bytes(), true) {
        let _ = fs::remove_file(tmp);
        return Err(Error::io("writing", &sum, e));
    }
    fs::rename(tmp, path).map_err(|e| fail("moving into the cache", path, e))
}

/// Removes a cache entry (output and digest file) that failed [`check_entry`].
pub(crate) fn discard(path: &Path) {
    let _ = fs::remove_file(path);
    let _ = fs::remove_file(sum_path(path));
}

/// Writes `data` to `path` through a temporary sibling and a rename; with `sync`, the data is
/// on disk before the rename.
fn write_file_atomic(path: &Path, data: &[u8], sync: bool) -> io::Result<()> {
    use std::io::Write as _;
    let tmp = temp_path_for(path);
    let res = fs::File::create(&tmp)
        .and_then(|mut f| {
            f.write_all(data)?;
            if sync {
                f.sync_all()?;
            }
            Ok(())
        })
        .and_then(|()| fs::rename(&tmp, path));
    if res.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    res
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
