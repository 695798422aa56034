//! Unit tests of the cache: directories, atomic writes, digests, eviction, claims.

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
fn sizes_parse() {
    assert_eq!(parse_size("1024"), Some(1024));
    assert_eq!(parse_size("64k"), Some(64 << 10));
    assert_eq!(parse_size(" 500M "), Some(500 << 20));
    assert_eq!(parse_size("2G"), Some(2 << 30));
    assert_eq!(parse_size("0"), Some(0));
    for bad in ["", "G", "1.5G", "-1", "10X", "lots"] {
        assert_eq!(parse_size(bad), None, "{bad}");
    }
}

/// Sets a file's time to `ago` in the past (through `touch`, as std's setter is newer
/// than the crate's minimum Rust).
fn age(path: &Path, ago: &str) {
    let st = std::process::Command::new("touch")
        .arg("-d")
        .arg(ago)
        .arg(path)
        .status()
        .unwrap();
    assert!(st.success());
}

#[test]
fn eviction_removes_the_least_recently_used_entries_down_to_the_bound() {
    let d = test_dir("evict");
    // Four 1000-byte entries with digests, used 5, 4, 3 and 2 hours ago.
    let mut entries = Vec::new();
    for (i, ago) in ["5 hours ago", "4 hours ago", "3 hours ago", "2 hours ago"]
        .iter()
        .enumerate()
    {
        let p = d.join(format!("e{i}.0123.cubin"));
        let tmp = d.join(format!("e{i}.tmp.cubin"));
        fs::write(&tmp, vec![i as u8; 1000]).unwrap();
        store(&tmp, &p).unwrap();
        assert_eq!(check_entry(&p), Entry::Valid);
        age(&sum_path(&p), ago);
        entries.push(p);
    }
    let sum_len = fs::metadata(sum_path(&entries[0])).unwrap().len();
    let total = 4 * (1000 + sum_len);
    // Under the bound: nothing goes.
    let none = std::collections::HashSet::new();
    assert_eq!(evict(&d, total, &none, Duration::ZERO), 0);
    // Room for two: the two oldest go, except e0, which this build uses: e1 and e2 go.
    let keep: std::collections::HashSet<PathBuf> = [entries[0].clone()].into();
    let removed = evict(&d, 2 * (1000 + sum_len), &keep, Duration::ZERO);
    assert_eq!(removed, 2 * (1000 + sum_len));
    let exists: Vec<bool> = entries.iter().map(|p| p.exists()).collect();
    assert_eq!(exists, [true, false, false, true]);
    assert!(!sum_path(&entries[1]).exists());
    // Entries used recently are kept even over the bound.
    assert_eq!(evict(&d, 0, &none, Duration::from_secs(6 * 3600)), 0);
    // A hit marks the entry as used: after checking e0, e3 is the older one.
    age(&sum_path(&entries[0]), "3 hours ago");
    assert_eq!(check_entry(&entries[0]), Entry::Valid);
    evict(&d, 1000 + sum_len, &none, Duration::ZERO);
    assert!(entries[0].exists() && !entries[3].exists());
    let _ = fs::remove_dir_all(d);
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
