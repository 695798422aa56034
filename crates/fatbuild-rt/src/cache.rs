//! The disk cache of compiled kernels: what NVRTC compiled (and what the driver linked from
//! several PTX files), kept across processes under a key that hashes everything the image
//! depends on, verified in full on every read, bounded in size.
//!
//! The design is warpfft's C core's (`c_core/src/runtime/kcache.c`), in Rust:
//!
//! - An entry is one file `<dir>/<key>.fbk`: a 64-byte header (magic `FBRTKCHE`, format
//!   version, payload kind, payload size, SHA-256 of the payload, 8 zero bytes; little-endian)
//!   and the payload (a CUBIN, or PTX). Keys hash every input, so an entry is never updated in
//!   place: it is written to a unique temp file in the directory and renamed over the entry
//!   (atomic: concurrent writers of one key both leave a whole entry, a reader sees none or
//!   one).
//! - Every read is verified (magic, format, kind, size, payload hash); an entry that fails is
//!   deleted and counts as a miss, so the kernel is compiled again, never loaded. It is deleted
//!   only if it is still the file that was read: renamed aside, compared (device, inode), and
//!   renamed back if another process had just put a new entry there.
//! - The entries are code the process will run and SHA-256 is integrity, not authentication:
//!   a directory another user could write (owned by someone else, or group/world-writable) is
//!   not used. It is checked as opened (`O_NOFOLLOW`: not itself a symbolic link), and every
//!   entry is then opened, created, renamed and deleted relative to that descriptor, never by
//!   path again. Entries must be regular files (opened `O_NOFOLLOW | O_NONBLOCK`).
//! - After each write the least recently used entries (by mtime, which a hit touches) are
//!   deleted until the entries total at most the bound; temp files over an hour old go too.
//! - Nothing here fails a load: an unusable directory or a failed write is recorded
//!   ([`KernelCache::note`]) and the kernel compiled every time.

use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

use crate::dl;

mod dir;
use dir::{fd_of, fstat, is_lnk, is_reg, Dir};

/// The variable naming the cache directory; set and empty turns the cache off.
pub const CACHE_DIR_ENV: &str = "FATBUILD_RT_CACHE_DIR";
/// The variable bounding the cache's size in bytes (decimal digits).
pub const CACHE_MAX_SIZE_ENV: &str = "FATBUILD_RT_CACHE_MAX_SIZE";
/// The default bound: 256 MiB.
pub const DEFAULT_CACHE_MAX_SIZE: u64 = 256 << 20;

const MAGIC: &[u8; 8] = b"FBRTKCHE";
const FORMAT: u32 = 1;
const HEADER: usize = 64;
/// A sanity bound on a payload (a module's image is at most tens of MB).
const MAX_PAYLOAD: u64 = 1 << 30;
const EXT: &str = ".fbk";

/// What a compiled image is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CompiledKind {
    /// A CUBIN for one real arch (`cuModuleLoadData`).
    Cubin,
    /// PTX text, NUL-terminated, for the driver to JIT.
    Ptx,
}

impl CompiledKind {
    fn code(self) -> u32 {
        match self {
            CompiledKind::Cubin => 1,
            CompiledKind::Ptx => 2,
        }
    }

    fn from_code(c: u32) -> Option<CompiledKind> {
        match c {
            1 => Some(CompiledKind::Cubin),
            2 => Some(CompiledKind::Ptx),
            _ => None,
        }
    }
}

/// A compiled image: NVRTC's output, or what the driver linked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompiledImage {
    /// CUBIN or PTX.
    pub kind: CompiledKind,
    /// The bytes; PTX ends in its NUL.
    pub data: Vec<u8>,
}

/// A cache key: SHA-256 over named parts, each prefixed with its length (so no two lists of
/// parts hash alike).
#[derive(Clone)]
pub struct KeyBuilder(Sha256);

impl KeyBuilder {
    /// A key for `kind`, a string naming what the entries are (it is the first part).
    pub fn new(kind: &str) -> KeyBuilder {
        KeyBuilder(Sha256::new()).bytes(kind.as_bytes())
    }

    /// Adds bytes.
    pub fn bytes(mut self, b: &[u8]) -> KeyBuilder {
        self.0.update((b.len() as u64).to_le_bytes());
        self.0.update(b);
        self
    }

    /// Adds a string.
    pub fn text(self, s: &str) -> KeyBuilder {
        self.bytes(s.as_bytes())
    }

    /// The key: 64 lower-case hex digits.
    pub fn finish(self) -> String {
        hex(&self.0.finalize())
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The kernel cache: a directory, or off.
pub struct KernelCache {
    dir: Option<PathBuf>,
    off: String,
    max_size: u64,
    note: Mutex<String>,
}

debug_fields!(KernelCache { dir, max_size } finish);

impl KernelCache {
    /// The cache the environment names: `$FATBUILD_RT_CACHE_DIR` (set and empty: off), else
    /// `$XDG_CACHE_HOME/fatbuild-rt` (an absolute `XDG_CACHE_HOME` only), else
    /// `$HOME/.cache/fatbuild-rt`; bounded by `$FATBUILD_RT_CACHE_MAX_SIZE` bytes (default
    /// 256 MiB).
    pub fn from_env() -> KernelCache {
        let (dir, off) = match dl::env(CACHE_DIR_ENV) {
            Some(v) if v.is_empty() => (None, format!("off ({CACHE_DIR_ENV} is set and empty)")),
            Some(v) => (Some(PathBuf::from(v)), String::new()),
            None => match (dl::env("XDG_CACHE_HOME"), dl::env("HOME")) {
                (Some(x), _) if Path::new(&x).is_absolute() => {
                    (Some(PathBuf::from(x).join("fatbuild-rt")), String::new())
                }
                (_, Some(h)) if !h.is_empty() => (
                    Some(PathBuf::from(h).join(".cache/fatbuild-rt")),
                    String::new(),
                ),
                _ => (
                    None,
                    format!("off (none of {CACHE_DIR_ENV}, XDG_CACHE_HOME, HOME is set)"),
                ),
            },
        };
        let mut c = KernelCache {
            dir,
            off,
            max_size: DEFAULT_CACHE_MAX_SIZE,
            note: Mutex::new(String::new()),
        };
        if let Some(v) = dl::env(CACHE_MAX_SIZE_ENV).filter(|v| !v.is_empty()) {
            match v.to_str().and_then(|s| s.parse::<u64>().ok()) {
                Some(n) if v.as_bytes().iter().all(u8::is_ascii_digit) => c.max_size = n,
                _ => c.set_note(format!(
                    "{CACHE_MAX_SIZE_ENV}={} is not a number of bytes; using {DEFAULT_CACHE_MAX_SIZE}",
                    v.to_string_lossy()
                )),
            }
        }
        c
    }

    /// A cache in `dir` (created with mode 0700 when missing), bounded by the default size.
    pub fn at(dir: impl AsRef<Path>) -> KernelCache {
        KernelCache {
            dir: Some(dir.as_ref().to_path_buf()),
            off: String::new(),
            max_size: DEFAULT_CACHE_MAX_SIZE,
            note: Mutex::new(String::new()),
        }
    }

    /// No cache: every kernel is compiled every time.
    pub fn disabled() -> KernelCache {
        KernelCache {
            dir: None,
            off: "off".into(),
            max_size: 0,
            note: Mutex::new(String::new()),
        }
    }

    /// The same cache with another size bound (bytes; entries are evicted beyond it).
    pub fn with_max_size(mut self, bytes: u64) -> KernelCache {
        self.max_size = bytes;
        self
    }

    /// The directory, `None` when the cache is off.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// Why the cache is off, or the last problem it met (`""` when none): an unusable
    /// directory, an entry that failed verification and was removed, a failed write.
    pub fn note(&self) -> String {
        let n = self.note.lock().unwrap_or_else(|e| e.into_inner());
        if n.is_empty() {
            self.off.clone()
        } else {
            n.clone()
        }
    }

    fn set_note(&self, s: String) {
        *self.note.lock().unwrap_or_else(|e| e.into_inner()) = s;
    }

    /// The entry of `key` (from [`KeyBuilder::finish`]), verified, and its mtime touched; `None`
    /// on a miss. An entry that fails verification is deleted (and noted) and is a miss.
    pub fn get(&self, key: &str) -> Option<CompiledImage> {
        if !key_ok(key) {
            return None;
        }
        let dir = self.open_dir()?;
        let name = format!("{key}{EXT}");
        let fd = dir.openat(
            &name,
            libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY,
            0,
        );
        let mut file = match fd {
            Ok(f) => f,
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return None,
            Err(e) => {
                match dir.lstat(&name) {
                    Some(st) if !is_reg(&st) => {
                        let why = if is_lnk(&st) {
                            "a symbolic link"
                        } else {
                            "not a regular file"
                        };
                        self.drop_bad(&dir, &name, &st, why);
                    }
                    _ => self.set_note(format!(
                        "cannot read the cache entry {}/{name} ({e})",
                        dir.path.display()
                    )),
                }
                return None;
            }
        };
        let st = fstat(&file)?;
        let read = if is_reg(&st) {
            read_entry(&mut file, &st)
        } else {
            Err(Some("not a regular file"))
        };
        match read {
            Ok(img) => {
                // Recently used: eviction takes the oldest mtimes first.
                // SAFETY: a valid descriptor; NULL times mean "now".
                unsafe { libc::futimens(fd_of(&file), std::ptr::null()) };
                Some(img)
            }
            Err(Some(why)) => {
                drop(file);
                self.drop_bad(&dir, &name, &st, why);
                None
            }
            Err(None) => None, // not the entry's fault (out of memory): a miss, it stays
        }
    }

    /// Stores `img` under `key` (temp file + rename), then evicts beyond the bound. Failures
    /// are noted, not returned.
    pub fn put(&self, key: &str, img: &CompiledImage) {
        if !key_ok(key) || img.data.is_empty() {
            return;
        }
        let Some(dir) = self.open_dir() else { return };
        let name = format!("{key}{EXT}");
        let (mut file, tmp) = match dir.make_temp(key) {
            Ok(x) => x,
            Err(e) => {
                self.set_note(format!(
                    "cannot write to the cache directory {} ({e}); kernels are compiled every time",
                    dir.path.display()
                ));
                return;
            }
        };
        let mut h = [0u8; HEADER];
        h[..8].copy_from_slice(MAGIC);
        h[8..12].copy_from_slice(&FORMAT.to_le_bytes());
        h[12..16].copy_from_slice(&img.kind.code().to_le_bytes());
        h[16..24].copy_from_slice(&(img.data.len() as u64).to_le_bytes());
        h[24..56].copy_from_slice(&Sha256::digest(&img.data));
        let wrote = file
            .write_all(&h)
            .and_then(|_| file.write_all(&img.data))
            .and_then(|_| file.sync_all());
        drop(file);
        let res = wrote.and_then(|_| dir.rename(&tmp, &name));
        match res {
            Ok(()) => self.evict(&dir, &name),
            Err(e) => {
                dir.unlink(&tmp);
                self.set_note(format!(
                    "cannot write the cache entry {}/{name} ({e})",
                    dir.path.display()
                ));
            }
        }
    }

    /// Removes `key`'s entry (one the driver refused to load).
    pub fn remove(&self, key: &str) {
        if key_ok(key) {
            if let Some(dir) = self.open_dir() {
                dir.unlink(&format!("{key}{EXT}"));
            }
        }
    }

    /// The directory, created if needed, opened and checked; `None` (noted) when unusable.
    fn open_dir(&self) -> Option<Dir> {
        match Dir::open(self.dir.as_ref()?) {
            Ok(d) => Some(d),
            Err(why) => {
                self.set_note(format!(
                    "cache directory unusable: {why}; kernels are compiled every time"
                ));
                None
            }
        }
    }

    /// Deletes the bad entry `name` if it is still the file that was read (`was`).
    fn drop_bad(&self, dir: &Dir, name: &str, was: &libc::stat, why: &str) {
        let key = &name[..name.len().min(64)];
        let shown = format!("{}/{name}", dir.path.display());
        let tmp = match dir.make_temp(key) {
            Ok((f, tmp)) => {
                drop(f);
                tmp
            }
            Err(e) => {
                self.set_note(format!(
                    "cannot remove the invalid cache entry {shown} ({why}): {e}"
                ));
                return;
            }
        };
        if let Err(e) = dir.rename(name, &tmp) {
            dir.unlink(&tmp);
            if e.raw_os_error() != Some(libc::ENOENT) {
                self.set_note(format!(
                    "cannot remove the invalid cache entry {shown} ({why}): {e}"
                ));
            }
            return;
        }
        match dir.lstat(&tmp) {
            Some(now) if now.st_dev == was.st_dev && now.st_ino == was.st_ino => dir.unlink(&tmp),
            _ => {
                // A new entry replaced the bad one meanwhile: back in place.
                if dir.rename(&tmp, name).is_err() {
                    dir.unlink(&tmp);
                }
            }
        }
        self.set_note(format!("removed the invalid cache entry {shown} ({why})"));
    }

    /// Deletes the least recently used entries beyond the bound (`newest` last) and temp
    /// files over an hour old.
    fn evict(&self, dir: &Dir, newest: &str) {
        let Some(names) = dir.list() else {
            self.set_note(format!(
                "cannot list the cache directory {}",
                dir.path.display()
            ));
            return;
        };
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as libc::time_t);
        let mut entries = Vec::new();
        let mut total: u64 = 0;
        for n in names {
            let Some(s) = n.to_str() else { continue };
            let (entry, temp) = (is_entry(s), is_temp(s));
            if !entry && !temp {
                continue;
            }
            let Some(st) = dir.lstat(s) else { continue };
            if !is_reg(&st) {
                continue;
            }
            if temp {
                if now - st.st_mtime > 3600 {
                    dir.unlink(s);
                }
                continue;
            }
            total += st.st_size as u64;
            entries.push((
                s == newest,
                st.st_mtime,
                st.st_mtime_nsec,
                s.to_string(),
                st.st_size as u64,
            ));
        }
        if total <= self.max_size {
            return;
        }
        entries.sort();
        for (_, _, _, name, size) in entries {
            if total <= self.max_size {
                break;
            }
            dir.unlink(&name);
            total -= size;
        }
    }
}

/// Reads and verifies an open entry: `Err(Some(why))` when it is invalid, `Err(None)` when the
/// failure is not the entry's.
fn read_entry(f: &mut File, st: &libc::stat) -> Result<CompiledImage, Option<&'static str>> {
    let mut h = [0u8; HEADER];
    if (st.st_size as u64) < HEADER as u64 || f.read_exact(&mut h).is_err() {
        return Err(Some("shorter than its header"));
    }
    let u32_at = |i: usize| u32::from_le_bytes(h[i..i + 4].try_into().unwrap());
    let size = u64::from_le_bytes(h[16..24].try_into().unwrap());
    if &h[..8] != MAGIC {
        return Err(Some("wrong magic"));
    }
    if u32_at(8) != FORMAT {
        return Err(Some("another format version"));
    }
    let kind = CompiledKind::from_code(u32_at(12)).ok_or(Some("unknown payload kind"))?;
    if size == 0 || size > MAX_PAYLOAD || st.st_size as u64 != HEADER as u64 + size {
        return Err(Some("size differs from its header (truncated?)"));
    }
    let mut data = Vec::new();
    data.try_reserve_exact(size as usize).map_err(|_| None)?;
    data.resize(size as usize, 0);
    if f.read_exact(&mut data).is_err() {
        return Err(Some("read failed or truncated"));
    }
    if Sha256::digest(&data).as_slice() != &h[24..56] {
        return Err(Some("payload checksum mismatch"));
    }
    Ok(CompiledImage { kind, data })
}

fn key_ok(key: &str) -> bool {
    key.len() == 64
        && key
            .bytes()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c))
}

fn is_entry(name: &str) -> bool {
    name.strip_suffix(EXT).is_some_and(key_ok)
}

fn is_temp(name: &str) -> bool {
    name.starts_with(".tmp-") && name.len() == 5 + 64 + 7
}

#[cfg(test)]
mod tests;
