//! The kernel cache on a real directory: round trips, every kind of damaged entry (deleted,
//! noted, a miss), unusable directories, eviction.

use super::*;
use std::ffi::CString;
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::fs::PermissionsExt;

fn fresh_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "fatbuild-rt-cache-{tag}-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn key(n: u8) -> String {
    KeyBuilder::new("test").bytes(&[n]).finish()
}

fn cubin(n: usize) -> CompiledImage {
    CompiledImage {
        kind: CompiledKind::Cubin,
        data: (0..n).map(|i| (i * 7 % 251) as u8).collect(),
    }
}

fn entry_path(dir: &Path, k: &str) -> PathBuf {
    dir.join(format!("{k}{EXT}"))
}

fn now_secs() -> libc::time_t {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as libc::time_t
}

#[test]
fn keys_are_hex_and_depend_on_every_part() {
    let a = KeyBuilder::new("k").text("ab").text("c").finish();
    let b = KeyBuilder::new("k").text("a").text("bc").finish();
    assert_eq!(a.len(), 64);
    assert!(key_ok(&a));
    assert_ne!(a, b, "parts are length-prefixed");
    assert_ne!(a, KeyBuilder::new("j").text("ab").text("c").finish());
    assert!(!key_ok("xyz") && !key_ok(&a.to_uppercase()));
}

#[test]
fn an_entry_round_trips_and_a_miss_is_none() {
    let dir = fresh_dir("roundtrip");
    let c = KernelCache::at(&dir);
    assert!(c.get(&key(1)).is_none());
    let img = cubin(1000);
    c.put(&key(1), &img);
    assert_eq!(c.get(&key(1)), Some(img));
    let ptx = CompiledImage {
        kind: CompiledKind::Ptx,
        data: b".version 9.0\n\0".to_vec(),
    };
    c.put(&key(2), &ptx);
    assert_eq!(c.get(&key(2)), Some(ptx));
    assert_eq!(c.note(), "", "no problem met");
    // Created private: the entries are code the process runs.
    let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
    // A malformed key is refused without touching the disk.
    c.put("../escape", &cubin(10));
    assert!(c.get("../escape").is_none());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Writes a valid entry for `k`, damages it with `f`, and checks the read is a miss that
/// removed the file and noted why.
fn damaged(tag: &str, f: impl FnOnce(&Path), why: &str) {
    let dir = fresh_dir(tag);
    let c = KernelCache::at(&dir);
    let k = key(3);
    c.put(&k, &cubin(4096));
    let p = entry_path(&dir, &k);
    f(&p);
    assert!(c.get(&k).is_none(), "{tag}: a damaged entry must not load");
    assert!(
        std::fs::symlink_metadata(&p).is_err(),
        "{tag}: the damaged entry is removed"
    );
    let note = c.note();
    assert!(
        note.contains("removed the invalid cache entry") && note.contains(why),
        "{tag}: {note}"
    );
    assert!(note.contains(&dir.display().to_string()), "{tag}: {note}");
    // And the next write and read work again.
    c.put(&k, &cubin(4096));
    assert_eq!(c.get(&k), Some(cubin(4096)), "{tag}");
    std::fs::remove_dir_all(&dir).unwrap();
}

fn edit(p: &Path, f: impl FnOnce(&mut Vec<u8>)) {
    let mut b = std::fs::read(p).unwrap();
    f(&mut b);
    std::fs::write(p, b).unwrap();
}

#[test]
fn a_flipped_payload_byte_is_caught_by_the_checksum() {
    damaged(
        "flip",
        |p| edit(p, |b| b[HEADER + 100] ^= 0x40),
        "payload checksum mismatch",
    );
}

#[test]
fn a_truncated_entry_is_caught_by_its_size() {
    damaged(
        "trunc",
        |p| edit(p, |b| b.truncate(b.len() - 1)),
        "size differs from its header",
    );
    damaged(
        "short",
        |p| edit(p, |b| b.truncate(10)),
        "shorter than its header",
    );
    damaged(
        "empty",
        |p| edit(p, |b| b.clear()),
        "shorter than its header",
    );
}

#[test]
fn a_foreign_file_is_caught_by_its_header() {
    damaged("magic", |p| edit(p, |b| b[0] = b'X'), "wrong magic");
    damaged(
        "format",
        |p| edit(p, |b| b[8] = 9),
        "another format version",
    );
    damaged("kind", |p| edit(p, |b| b[12] = 7), "unknown payload kind");
}

#[test]
fn links_and_fifos_are_not_entries() {
    damaged(
        "link",
        |p| {
            let target = p.with_extension("target");
            std::fs::rename(p, &target).unwrap();
            std::os::unix::fs::symlink(&target, p).unwrap();
        },
        "a symbolic link",
    );
    damaged(
        "fifo",
        |p| {
            std::fs::remove_file(p).unwrap();
            let c = CString::new(p.as_os_str().as_bytes()).unwrap();
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        },
        "not a regular file",
    );
}

#[test]
fn a_directory_others_can_write_is_not_used() {
    let dir = fresh_dir("perm");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let c = KernelCache::at(&dir);
    c.put(&key(4), &cubin(100));
    assert!(c.get(&key(4)).is_none());
    assert!(
        c.note().contains("writable by other users") && c.note().contains("compiled every time"),
        "{}",
        c.note()
    );
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        0,
        "nothing written"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_directory_that_is_a_link_is_not_used() {
    let dir = fresh_dir("dirlink");
    let real = dir.with_extension("real");
    let _ = std::fs::remove_dir_all(&real);
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&real)
        .unwrap();
    std::os::unix::fs::symlink(&real, &dir).unwrap();
    let c = KernelCache::at(&dir);
    c.put(&key(5), &cubin(100));
    assert!(c.note().contains("a symbolic link"), "{}", c.note());
    // A trailing slash does not get it followed either.
    let slash = KernelCache::at(format!("{}/", dir.display()));
    slash.put(&key(5), &cubin(100));
    assert!(slash.note().contains("a symbolic link"), "{}", slash.note());
    assert_eq!(std::fs::read_dir(&real).unwrap().count(), 0);
    std::fs::remove_file(&dir).unwrap();
    std::fs::remove_dir_all(&real).unwrap();
}

#[test]
fn a_path_that_cannot_be_a_directory_is_noted() {
    let file = fresh_dir("notadir");
    std::fs::write(&file, b"x").unwrap();
    let c = KernelCache::at(file.join("sub"));
    c.put(&key(6), &cubin(10));
    assert!(c.get(&key(6)).is_none());
    assert!(c.note().contains("cannot create"), "{}", c.note());
    std::fs::remove_file(&file).unwrap();
}

#[test]
fn eviction_keeps_the_bound_and_the_newest_entry() {
    let dir = fresh_dir("evict");
    let one = (HEADER + 1000) as u64;
    let c = KernelCache::at(&dir).with_max_size(3 * one);
    // Which of `keys` a cache holds.
    let held = |c: &KernelCache, keys: &[u8]| -> Vec<bool> {
        keys.iter().map(|&n| c.get(&key(n)).is_some()).collect()
    };
    for n in 0..3 {
        c.put(&key(n), &cubin(1000));
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // A hit refreshes key(0): key(1) is now the least recently used.
    assert!(c.get(&key(0)).is_some());
    std::thread::sleep(std::time::Duration::from_millis(20));
    c.put(&key(3), &cubin(1000));
    assert_eq!(
        held(&c, &[0, 1, 2, 3]),
        [true, false, true, true],
        "the least recently used entry (1) went, the others stay"
    );
    // The bound holds even against the entry just written (it goes last).
    let small = KernelCache::at(&dir).with_max_size(one);
    small.put(&key(9), &cubin(1000));
    assert_eq!(
        held(&small, &[0, 2, 3, 9]),
        [false, false, false, true],
        "the others are evicted first; the newest entry stays while it fits"
    );
    let tiny = KernelCache::at(&dir).with_max_size(10);
    tiny.put(&key(10), &cubin(1000));
    assert_eq!(held(&tiny, &[9, 10]), [false, false]);
    // Old temp files of a writer that died are removed; other files are left alone.
    let stale = dir.join(format!(".tmp-{}-AAAAAA", key(7)));
    std::fs::write(&stale, b"partial").unwrap();
    let old = now_secs() - 7200;
    let times = [libc::timespec {
        tv_sec: old,
        tv_nsec: 0,
    }; 2];
    let c = CString::new(stale.as_os_str().as_bytes()).unwrap();
    assert_eq!(
        unsafe { libc::utimensat(libc::AT_FDCWD, c.as_ptr(), times.as_ptr(), 0) },
        0
    );
    std::fs::write(dir.join("README"), b"mine").unwrap();
    tiny.put(&key(8), &cubin(10));
    assert!(!stale.exists(), "stale temp file removed");
    assert!(dir.join("README").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_environment_names_the_directory_or_turns_it_off() {
    // The only test that touches these variables.
    std::env::set_var(CACHE_DIR_ENV, "");
    let c = KernelCache::from_env();
    assert!(c.dir().is_none());
    assert!(c.note().contains("set and empty"), "{}", c.note());
    let dir = fresh_dir("env");
    std::env::set_var(CACHE_DIR_ENV, &dir);
    std::env::set_var(CACHE_MAX_SIZE_ENV, " -1");
    let c = KernelCache::from_env();
    assert_eq!(c.dir(), Some(dir.as_path()));
    assert!(
        c.note().contains("is not a number of bytes"),
        "{}",
        c.note()
    );
    std::env::set_var(CACHE_MAX_SIZE_ENV, "12345");
    assert_eq!(KernelCache::from_env().max_size, 12345);
    std::env::remove_var(CACHE_DIR_ENV);
    std::env::remove_var(CACHE_MAX_SIZE_ENV);
}

#[test]
fn debug_shows_the_directory_and_the_bound() {
    let c = KernelCache::at("/tmp/k").with_max_size(5);
    assert_eq!(
        format!("{c:?}"),
        "KernelCache { dir: Some(\"/tmp/k\"), max_size: 5 }"
    );
    assert_eq!(
        format!("{:?}", KernelCache::disabled()),
        "KernelCache { dir: None, max_size: 0 }"
    );
}
