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

use std::ffi::{CStr, CString, OsStr, OsString};
use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::io::FromRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

use crate::dl;

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

impl std::fmt::Debug for KernelCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelCache")
            .field("dir", &self.dir)
            .field("max_size", &self.max_size)
            .finish()
    }
}

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
        let path = self.dir.as_ref()?;
        let path = strip_trailing_slashes(path);
        if !path.is_dir() {
            if let Err(e) = std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&path)
            {
                self.set_note(format!(
                    "cache directory unusable: cannot create {} ({e}); kernels are compiled every time",
                    path.display()
                ));
                return None;
            }
        }
        let c = CString::new(path.as_os_str().as_bytes()).ok()?;
        // SAFETY: a valid C string.
        let fd = unsafe {
            libc::open(
                c.as_ptr(),
                libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            )
        };
        let bad: Option<String> = if fd < 0 {
            let e = std::io::Error::last_os_error();
            let link = std::fs::symlink_metadata(&path)
                .map(|m| m.file_type().is_symlink())
                .unwrap_or(false);
            Some(if link {
                "a symbolic link".into()
            } else {
                e.to_string()
            })
        } else {
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            // SAFETY: a valid descriptor; `st` is written.
            if unsafe { libc::fstat(fd, &mut st) } != 0 {
                Some(std::io::Error::last_os_error().to_string())
            } else if st.st_mode & libc::S_IFMT != libc::S_IFDIR {
                Some("not a directory".into())
            } else if st.st_uid != unsafe { libc::geteuid() } {
                Some("owned by another user".into())
            } else if st.st_mode & 0o022 != 0 {
                Some("writable by other users".into())
            } else {
                None
            }
        };
        if let Some(bad) = bad {
            if fd >= 0 {
                // SAFETY: ours to close.
                unsafe { libc::close(fd) };
            }
            self.set_note(format!(
                "cache directory unusable: {} is {bad}; kernels are compiled every time",
                path.display()
            ));
            return None;
        }
        Some(Dir { fd, path })
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

/// The checked, open cache directory; every entry operation goes through its descriptor.
struct Dir {
    fd: libc::c_int,
    path: PathBuf,
}

impl Drop for Dir {
    fn drop(&mut self) {
        // SAFETY: ours to close.
        unsafe { libc::close(self.fd) };
    }
}

impl Dir {
    fn openat(&self, name: &str, flags: libc::c_int, mode: libc::mode_t) -> std::io::Result<File> {
        let c = cstr(name)?;
        // SAFETY: a valid directory descriptor and C string.
        let fd = unsafe {
            libc::openat(
                self.fd,
                c.as_ptr(),
                flags | libc::O_CLOEXEC,
                mode as libc::c_uint,
            )
        };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: a descriptor we own from here on.
        Ok(unsafe { File::from_raw_fd(fd) })
    }

    fn lstat(&self, name: &str) -> Option<libc::stat> {
        let c = cstr(name).ok()?;
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: valid descriptor, C string and out-pointer.
        let r = unsafe { libc::fstatat(self.fd, c.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) };
        (r == 0).then_some(st)
    }

    fn rename(&self, from: &str, to: &str) -> std::io::Result<()> {
        let (a, b) = (cstr(from)?, cstr(to)?);
        // SAFETY: valid descriptor and C strings.
        if unsafe { libc::renameat(self.fd, a.as_ptr(), self.fd, b.as_ptr()) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    fn unlink(&self, name: &str) {
        if let Ok(c) = cstr(name) {
            // SAFETY: valid descriptor and C string.
            unsafe { libc::unlinkat(self.fd, c.as_ptr(), 0) };
        }
    }

    /// A new, empty temp file `.tmp-<key>-XXXXXX` (mode 0600): the file and its name.
    fn make_temp(&self, key: &str) -> std::io::Result<(File, String)> {
        const ABC: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let t = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        let seed = t ^ (u64::from(std::process::id()) << 40);
        let mut last = std::io::Error::from_raw_os_error(libc::EEXIST);
        for _ in 0..100 {
            // splitmix64
            let mut z = seed.wrapping_add(
                0x9e37_79b9_7f4a_7c15u64.wrapping_mul(COUNTER.fetch_add(1, Ordering::Relaxed) + 1),
            );
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            let r: String = (0..6)
                .map(|i| ABC[((z >> (6 * i)) % 62) as usize] as char)
                .collect();
            let name = format!(".tmp-{key}-{r}");
            let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW;
            match self.openat(&name, flags, 0o600) {
                Ok(f) => return Ok((f, name)),
                Err(e) if e.raw_os_error() == Some(libc::EEXIST) => last = e,
                Err(e) => return Err(e),
            }
        }
        Err(last)
    }

    /// The names in the directory, through its own descriptor.
    fn list(&self) -> Option<Vec<OsString>> {
        let dot = cstr(".").ok()?;
        // SAFETY: a new descriptor for the same directory (its own read position).
        let fd = unsafe {
            libc::openat(
                self.fd,
                dot.as_ptr(),
                libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            return None;
        }
        // SAFETY: fdopendir takes `fd` over (closedir closes it).
        let d = unsafe { libc::fdopendir(fd) };
        if d.is_null() {
            unsafe { libc::close(fd) };
            return None;
        }
        let mut out = Vec::new();
        loop {
            // SAFETY: `d` is open; the entry is valid until the next readdir.
            let e = unsafe { libc::readdir(d) };
            if e.is_null() {
                break;
            }
            let name = unsafe { CStr::from_ptr((*e).d_name.as_ptr()) };
            out.push(OsStr::from_bytes(name.to_bytes()).to_os_string());
        }
        // SAFETY: closes `d` and `fd`.
        unsafe { libc::closedir(d) };
        Some(out)
    }
}

fn cstr(s: &str) -> std::io::Result<CString> {
    CString::new(s).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))
}

fn fd_of(f: &File) -> libc::c_int {
    use std::os::unix::io::AsRawFd;
    f.as_raw_fd()
}

fn fstat(f: &File) -> Option<libc::stat> {
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a valid descriptor; `st` is written.
    (unsafe { libc::fstat(fd_of(f), &mut st) } == 0).then_some(st)
}

fn is_reg(st: &libc::stat) -> bool {
    st.st_mode & libc::S_IFMT == libc::S_IFREG
}

fn is_lnk(st: &libc::stat) -> bool {
    st.st_mode & libc::S_IFMT == libc::S_IFLNK
}

/// `d/` would follow `d` when it is a symbolic link: the check must see `d` itself.
fn strip_trailing_slashes(p: &Path) -> PathBuf {
    let b = p.as_os_str().as_bytes();
    let mut n = b.len();
    while n > 1 && b[n - 1] == b'/' {
        n -= 1;
    }
    PathBuf::from(OsStr::from_bytes(&b[..n]))
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
