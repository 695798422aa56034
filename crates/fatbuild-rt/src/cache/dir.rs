//! The cache directory as an open descriptor, checked once as opened (see the module docs of
//! `cache.rs` for why): every entry is opened, created, renamed, listed and deleted relative to
//! it, never by path again.

use std::ffi::{CStr, CString, OsStr, OsString};
use std::fs::File;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::io::FromRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// The checked, open cache directory; every entry operation goes through its descriptor.
pub(super) struct Dir {
    fd: libc::c_int,
    pub(super) path: PathBuf,
}

impl Drop for Dir {
    fn drop(&mut self) {
        // SAFETY: ours to close.
        unsafe { libc::close(self.fd) };
    }
}

impl Dir {
    /// `path`, created if needed (mode 0700), opened (`O_NOFOLLOW`) and checked as opened: a
    /// directory of this user that no one else can write; else why not.
    pub(super) fn open(path: &Path) -> Result<Dir, String> {
        let path = strip_trailing_slashes(path);
        if !path.is_dir() {
            if let Err(e) = std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&path)
            {
                return Err(format!("cannot create {} ({e})", path.display()));
            }
        }
        let c = CString::new(path.as_os_str().as_bytes())
            .map_err(|_| format!("{} holds a NUL byte", path.display()))?;
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
            return Err(format!("{} is {bad}", path.display()));
        }
        Ok(Dir { fd, path })
    }

    pub(super) fn openat(
        &self,
        name: &str,
        flags: libc::c_int,
        mode: libc::mode_t,
    ) -> std::io::Result<File> {
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

    pub(super) fn lstat(&self, name: &str) -> Option<libc::stat> {
        let c = cstr(name).ok()?;
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: valid descriptor, C string and out-pointer.
        let r = unsafe { libc::fstatat(self.fd, c.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) };
        (r == 0).then_some(st)
    }

    pub(super) fn rename(&self, from: &str, to: &str) -> std::io::Result<()> {
        let (a, b) = (cstr(from)?, cstr(to)?);
        // SAFETY: valid descriptor and C strings.
        if unsafe { libc::renameat(self.fd, a.as_ptr(), self.fd, b.as_ptr()) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    pub(super) fn unlink(&self, name: &str) {
        if let Ok(c) = cstr(name) {
            // SAFETY: valid descriptor and C string.
            unsafe { libc::unlinkat(self.fd, c.as_ptr(), 0) };
        }
    }

    /// A new, empty temp file `.tmp-<key>-XXXXXX` (mode 0600): the file and its name.
    pub(super) fn make_temp(&self, key: &str) -> std::io::Result<(File, String)> {
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
    pub(super) fn list(&self) -> Option<Vec<OsString>> {
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

pub(super) fn cstr(s: &str) -> std::io::Result<CString> {
    CString::new(s).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))
}

pub(super) fn fd_of(f: &File) -> libc::c_int {
    use std::os::unix::io::AsRawFd;
    f.as_raw_fd()
}

pub(super) fn fstat(f: &File) -> Option<libc::stat> {
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a valid descriptor; `st` is written.
    (unsafe { libc::fstat(fd_of(f), &mut st) } == 0).then_some(st)
}

pub(super) fn is_reg(st: &libc::stat) -> bool {
    st.st_mode & libc::S_IFMT == libc::S_IFREG
}

pub(super) fn is_lnk(st: &libc::stat) -> bool {
    st.st_mode & libc::S_IFMT == libc::S_IFLNK
}

/// `d/` would follow `d` when it is a symbolic link: the check must see `d` itself.
pub(super) fn strip_trailing_slashes(p: &Path) -> PathBuf {
    let b = p.as_os_str().as_bytes();
    let mut n = b.len();
    while n > 1 && b[n - 1] == b'/' {
        n -= 1;
    }
    PathBuf::from(OsStr::from_bytes(&b[..n]))
}
