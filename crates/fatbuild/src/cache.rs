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
use std::time::{Duration, SystemTime};

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

/// How often a used entry's time is refreshed: a hit rewrites its digest file (or `.deps`
/// list) when that is older than this.
const TOUCH_EVERY: Duration = Duration::from_secs(10 * 60);

/// Entries used more recently than this are never evicted (another build may be about to read
/// them); it is well above [`TOUCH_EVERY`].
pub(crate) const EVICT_MIN_AGE: Duration = Duration::from_secs(60 * 60);

/// Environment variable overriding the cache directory.
pub const CACHE_DIR_ENV: &str = "FATBUILD_CACHE_DIR";

/// The cache size bound when [`MAX_SIZE_ENV`] is not set: 2 GiB.
pub const DEFAULT_MAX_SIZE: u64 = 2 << 30;

/// The variable that sets the cache's size bound: bytes, or with a `K`, `M`, `G` suffix
/// (powers of 1024); `0` turns eviction off.
pub const MAX_SIZE_ENV: &str = "FATBUILD_CACHE_MAX_SIZE";

/// Marks a cache file as used now by rewriting it in place (atomically, same contents), at
/// most every [`TOUCH_EVERY`], so that fully cached builds write almost nothing. Eviction
/// goes by these times.
pub(crate) fn touch_used(sum: &Path) {
    let fresh = fs::metadata(sum)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|age| age < TOUCH_EVERY);
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

/// Parses a size bound: `1073741824`, `512M`, `2G`, `64k`; `None` for anything else.
pub(crate) fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let (num, unit) = match t.char_indices().last()? {
        (i, c) if c.is_ascii_alphabetic() => (&t[..i], c.to_ascii_uppercase()),
        _ => (t, 'B'),
    };
    let shift = match unit {
        'B' => 0,
        'K' => 10,
        'M' => 20,
        'G' => 30,
        'T' => 40,
        _ => return None,
    };
    let n: u64 = num.trim().parse().ok()?;
    n.checked_mul(1 << shift)
}

/// One evictable cache entry: its files, their total size, and when it was last used.
struct Victim {
    files: Vec<PathBuf>,
    bytes: u64,
    used: SystemTime,
}

/// Bounds the cache at `max_bytes`: while it is larger, removes the least recently used
/// entries (an output with its digest file, or a `.deps` list; by the time of the digest
/// file, which every hit refreshes), skipping the files in `keep` (this build's) and entries
/// used within `min_age`. Leftover temporary files older than a day go too. Returns how many
/// bytes were removed. Errors are ignored (another build may be evicting too).
pub(crate) fn evict(
    cache_dir: &Path,
    max_bytes: u64,
    keep: &std::collections::HashSet<PathBuf>,
    min_age: Duration,
) -> u64 {
    let Ok(entries) = fs::read_dir(cache_dir) else {
        return 0;
    };
    let now = SystemTime::now();
    let age = |t: SystemTime| now.duration_since(t).unwrap_or_default();
    let mut files: Vec<(PathBuf, u64, SystemTime)> = Vec::new();
    for e in entries.flatten() {
        let Ok(meta) = e.metadata() else { continue };
        if meta.is_file() {
            let t = meta.modified().unwrap_or(now);
            files.push((e.path(), meta.len(), t));
        }
    }
    let total: u64 = files.iter().map(|f| f.1).sum();
    let mut removed = 0;
    let by_path: std::collections::HashMap<&Path, (u64, SystemTime)> = files
        .iter()
        .map(|(p, n, t)| (p.as_path(), (*n, *t)))
        .collect();
    let mut victims: Vec<Victim> = Vec::new();
    for (path, bytes, time) in &files {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if name.ends_with(".lock") || name.ends_with(".sum") {
            continue; // locks are never evicted; digest files go with their output
        }
        if name.contains(".tmp") {
            if age(*time) > Duration::from_secs(24 * 3600) && fs::remove_file(path).is_ok() {
                removed += bytes;
            }
            continue;
        }
        if keep.contains(path) {
            continue;
        }
        let sum = sum_path(path);
        let (files, bytes, used) = match by_path.get(sum.as_path()) {
            Some(&(n, t)) => (vec![path.clone(), sum], bytes + n, t),
            None => (vec![path.clone()], *bytes, *time),
        };
        if age(used) >= min_age {
            victims.push(Victim { files, bytes, used });
        }
    }
    // Digest files whose output is gone (a crash, or an output removed by hand).
    for (path, bytes, time) in &files {
        let name = path.to_string_lossy();
        if let Some(out) = name.strip_suffix(".sum") {
            if !by_path.contains_key(Path::new(out)) && age(*time) >= min_age {
                victims.push(Victim {
                    files: vec![path.clone()],
                    bytes: *bytes,
                    used: *time,
                });
            }
        }
    }
    if total.saturating_sub(removed) <= max_bytes {
        return removed;
    }
    victims.sort_by_key(|v| v.used);
    for v in victims {
        if total.saturating_sub(removed) <= max_bytes {
            break;
        }
        // The digest file first: an output without one is never trusted.
        for f in v.files.iter().rev() {
            let _ = fs::remove_file(f);
        }
        removed += v.bytes;
    }
    removed
}

/// How long a claim's owner may take before another build treats the claim as abandoned
/// (also the fallback when the owner's liveness cannot be checked).
const CLAIM_STALE_AFTER: Duration = Duration::from_secs(30 * 60);

/// The right to build one cache entry, held through `<entry>.lock` (created exclusively,
/// holding the owner's process id and host); released (the file removed) on drop. Concurrent
/// builds sharing a cache wait for the job another one is running instead of repeating it.
pub(crate) struct Claim {
    lock: PathBuf,
}

impl Drop for Claim {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.lock);
    }
}

/// This machine's name, to tell whether a claim's process id is ours to check.
fn host_name() -> String {
    fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| fs::read_to_string("/etc/hostname"))
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// Whether the claim in `lock` was abandoned: its process is gone (checked through `/proc`
/// on this host), or it is older than [`CLAIM_STALE_AFTER`].
fn claim_is_stale(lock: &Path) -> bool {
    let Ok(meta) = fs::metadata(lock) else {
        return false; // released meanwhile
    };
    let old = meta
        .modified()
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|a| a > CLAIM_STALE_AFTER);
    if old {
        return true;
    }
    let text = fs::read_to_string(lock).unwrap_or_default();
    let mut words = text.split_whitespace();
    let (Some(pid), host) = (words.next(), words.next().unwrap_or("")) else {
        // Being written right now, or damaged: judge by age alone.
        return false;
    };
    let proc_fs = Path::new("/proc/self").exists();
    proc_fs && host == host_name() && !Path::new("/proc").join(pid).exists()
}

/// Claims the building of the cache entry `entry` (`lock` names the claim file). Returns
/// `Some` when this build holds the claim; when another build holds it, waits until that one
/// is done (or found abandoned) and returns `None`: the caller checks the cache again, and
/// claims again if the entry is still missing.
pub(crate) fn claim(lock: &Path) -> Result<Option<Claim>, Error> {
    use std::io::Write as _;
    if let Some(dir) = lock.parent() {
        fs::create_dir_all(dir).map_err(|e| Error::io("creating directory", dir, e))?;
    }
    match fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(lock)
    {
        Ok(mut f) => {
            let _ = writeln!(f, "{} {}", std::process::id(), host_name());
            Ok(Some(Claim {
                lock: lock.to_path_buf(),
            }))
        }
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            let mut pause = Duration::from_millis(20);
            while lock.exists() {
                if claim_is_stale(lock) {
                    let _ = fs::remove_file(lock);
                    break;
                }
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(250));
            }
            Ok(None)
        }
        Err(e) => Err(Error::io("creating the claim", lock, e)),
    }
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
mod tests;
