//! Shared libraries opened at run time (`dlopen`): the driver and NVRTC are never linked, so
//! a program using this crate starts on a machine without CUDA and gets an [`Error`] there.
//!
//! A library that was accepted stays loaded for the life of the process (its function
//! pointers are handed out as `'static`); one that was rejected is closed.

use std::ffi::{c_void, CStr, CString, OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// An open library.
pub(crate) struct Library {
    handle: *mut c_void,
}

// The handle is only passed to dlsym, which is thread-safe.
unsafe impl Send for Library {}
unsafe impl Sync for Library {}

impl Library {
    /// Opens `name`: a path (with a `/`), or a file name for the system loader's search.
    pub(crate) fn open(name: &OsStr) -> Result<Library, String> {
        let c =
            CString::new(name.as_bytes()).map_err(|_| "the name holds a NUL byte".to_string())?;
        // SAFETY: `c` is a valid C string; the flags are plain constants.
        let handle = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if handle.is_null() {
            return Err(last_dl_error());
        }
        Ok(Library { handle })
    }

    /// The address of `name`, if the library exports it.
    pub(crate) fn symbol(&self, name: &str) -> Option<*mut c_void> {
        let c = CString::new(name).ok()?;
        // SAFETY: a live handle and a valid C string.
        let p = unsafe { libc::dlsym(self.handle, c.as_ptr()) };
        (!p.is_null()).then_some(p)
    }

    /// The file the loader opened (symbolic links resolved), for messages.
    pub(crate) fn path(&self, fallback: &OsStr) -> String {
        let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
        if let Some(p) = ["cuInit", "nvrtcVersion"]
            .iter()
            .find_map(|s| self.symbol(s))
        {
            // SAFETY: `p` is an address inside this library; `info` is written by dladdr.
            if unsafe { libc::dladdr(p, &mut info) } != 0 && !info.dli_fname.is_null() {
                let f = unsafe { CStr::from_ptr(info.dli_fname) };
                let p = Path::new(OsStr::from_bytes(f.to_bytes()));
                return p
                    .canonicalize()
                    .unwrap_or_else(|_| p.to_path_buf())
                    .display()
                    .to_string();
            }
        }
        Path::new(fallback).display().to_string()
    }

    /// Keeps the library loaded for the rest of the process.
    pub(crate) fn leak(self) {
        std::mem::forget(self);
    }
}

impl Drop for Library {
    fn drop(&mut self) {
        // SAFETY: the handle came from dlopen and nothing resolved from it is kept.
        unsafe { libc::dlclose(self.handle) };
    }
}

/// What was loaded so far (the driver, NVRTC), by the name it was asked for: kept for the
/// process. A failed load is not kept: a program may fix the environment and retry.
pub(crate) struct Loaded<T: 'static>(Mutex<Vec<(OsString, &'static T)>>);

impl<T> Loaded<T> {
    pub(crate) const fn new() -> Self {
        Loaded(Mutex::new(Vec::new()))
    }

    /// What `name` loaded before, else `load(name, shown)` (`shown`: the name for messages),
    /// kept for the rest of the process. Loads of one kind run one at a time.
    pub(crate) fn get_or_load(
        &self,
        name: &OsStr,
        load: impl FnOnce(&OsStr, String) -> crate::Result<T>,
    ) -> crate::Result<&'static T> {
        let mut loaded = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, t)) = loaded.iter().find(|(n, _)| n == name) {
            return Ok(t);
        }
        let shown = Path::new(name).display().to_string();
        let t: &'static T = Box::leak(Box::new(load(name, shown)?));
        loaded.push((name.to_os_string(), t));
        Ok(t)
    }
}

fn last_dl_error() -> String {
    // SAFETY: dlerror returns NULL or a C string valid until the next dl call on this thread.
    let e = unsafe { libc::dlerror() };
    if e.is_null() {
        "unknown dlopen error".into()
    } else {
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}

/// An environment variable, ignored (as glibc's `secure_getenv` does) in a setuid or setgid
/// process: the environment chooses libraries to load and directories of code to run.
pub(crate) fn env(name: &str) -> Option<std::ffi::OsString> {
    // SAFETY: plain getters.
    let elevated =
        unsafe { libc::getuid() != libc::geteuid() || libc::getgid() != libc::getegid() };
    if elevated {
        return None;
    }
    std::env::var_os(name)
}

/// Candidate files for a CUDA library: `$var` alone when set, else each of `sonames` in
/// `$CUDA_PATH/lib64`, `$CUDA_HOME/lib64`, `/usr/local/cuda/lib64` (those that exist), then
/// each soname by itself (the system loader's search: `LD_LIBRARY_PATH`, `ld.so.cache`).
pub(crate) fn candidates(var: &str, sonames: &[&str]) -> Vec<PathBuf> {
    if let Some(v) = env(var).filter(|v| !v.is_empty()) {
        return vec![PathBuf::from(v)];
    }
    let mut dirs: Vec<PathBuf> = ["CUDA_PATH", "CUDA_HOME"]
        .iter()
        .filter_map(|v| env(v))
        .filter(|v| !v.is_empty())
        .map(|v| PathBuf::from(v).join("lib64"))
        .collect();
    dirs.push(PathBuf::from("/usr/local/cuda/lib64"));
    let mut out = Vec::new();
    for d in dirs.iter().filter(|d| d.is_dir()) {
        for s in sonames {
            let p = d.join(s);
            if p.exists() && !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out.extend(sonames.iter().map(PathBuf::from));
    out
}
