//! What the build embedded: parse every fatbin (magic 0xBA55ED50 and entry headers, through
//! `fatbuild::fatbin`) and every PTX blob, and check them against the build mode. With
//! `WARPFFT_EXPECT_ARCHS` set at test time (CI: "80;90"), the fatbins must hold exactly ELF images
//! for those archs. With `nvrtc`, the embedded sources must be kernels/ as on disk (names,
//! sizes, digest). Runs without a GPU.

use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};
use warpfft::sys;

#[path = "common/module_names.rs"]
mod module_names;

/// The spreading modules' (direction, method) pairs: output-driven spreads only.
const SI_KINDS: [(&str, &str); 5] = [
    ("spread", "gm"),
    ("spread", "sm"),
    ("spread", "od"),
    ("interp", "gm"),
    ("interp", "sm"),
];

struct Blob {
    kind: c_int,
    label: String,
    data: &'static [u8],
}

fn modules() -> Vec<(String, Vec<Blob>)> {
    let n = unsafe { sys::warpfft_embedded_module_count() };
    (0..n)
        .map(|m| {
            let mut name: *const c_char = std::ptr::null();
            let mut nb = 0usize;
            assert_eq!(
                unsafe { sys::warpfft_embedded_module(m, &mut name, &mut nb) },
                0
            );
            let name = unsafe { CStr::from_ptr(name) }
                .to_string_lossy()
                .into_owned();
            let blobs = (0..nb)
                .map(|b| {
                    let (mut kind, mut label, mut data, mut size) = (
                        0,
                        std::ptr::null::<c_char>(),
                        std::ptr::null::<c_void>(),
                        0usize,
                    );
                    let st = unsafe {
                        sys::warpfft_embedded_blob(
                            m, b, &mut kind, &mut label, &mut data, &mut size,
                        )
                    };
                    assert_eq!(st, 0);
                    Blob {
                        kind,
                        label: unsafe { CStr::from_ptr(label) }
                            .to_string_lossy()
                            .into_owned(),
                        data: unsafe { std::slice::from_raw_parts(data as *const u8, size) },
                    }
                })
                .collect();
            (name, blobs)
        })
        .collect()
}

fn manifest() -> String {
    unsafe { CStr::from_ptr(sys::warpfft_build_manifest()) }
        .to_string_lossy()
        .into_owned()
}

fn expected_archs() -> Option<Vec<u32>> {
    let s = std::env::var("WARPFFT_EXPECT_ARCHS").ok()?;
    let mut v: Vec<u32> = s
        .split(|c: char| c == ';' || c == ',' || c.is_whitespace())
        .filter(|t| !t.is_empty())
        .map(|t| {
            t.trim_start_matches("sm_")
                .parse()
                .expect("WARPFFT_EXPECT_ARCHS")
        })
        .collect();
    v.sort();
    Some(v)
}

#[test]
fn embedded_images_match_the_build_mode() {
    let jit = cfg!(feature = "jit");
    let aot = cfg!(feature = "aot");
    let mode = build_mode();
    let man = manifest();
    assert!(
        man.contains(&format!("\"mode\":\"{mode}\"")),
        "manifest mode: {man}"
    );
    let mods = modules();
    // Every module a plan can need is there: sort, scan_big (the multi-block bin scan of plans
    // with many bins), sort_stable (deterministic plans), direct/type3/toeplitz per precision,
    // binning, deconvolve/amplify and the width the points take (offsets) per dimension and
    // precision, and the width-specialised
    // spreading/interpolation modules (f32 2..12, f64 2..16, dims 1..3), one per direction and
    // method, plus the output-driven spreading ones (a plan loads only what it launches).
    let names: Vec<&str> = mods.iter().map(|(n, _)| n.as_str()).collect();
    for want in [
        "sort",
        "scan_big",
        "sort_stable",
        "bin_1d_f32",
        "bin_3d_f64",
        "deconvolve_2d_f32",
        "amplify_3d_f64",
        "offsets_1d_f32",
        "offsets_3d_f64",
        "direct_f32",
        "direct_f64",
        "type3_f32",
        "type3_f64",
        "toeplitz_f32",
        "toeplitz_f64",
    ] {
        assert!(
            names.contains(&want),
            "module {want} missing from {names:?}"
        );
    }
    // The spreading modules at the ends of the width ranges, named by kernels/module_names.h,
    // complex and real-valued (precision f32r / f64r).
    for (dim, p, w) in [
        (1, "f32", 2),
        (3, "f64", 16),
        (2, "f32", 12),
        (1, "f32r", 2),
        (3, "f64r", 16),
        (2, "f32r", 12),
    ] {
        for (part, method) in SI_KINDS {
            let (want, _) = module_names::si_names(dim, p, w, part, method);
            assert!(
                names.contains(&want.as_str()),
                "module {want} missing from {names:?}"
            );
        }
    }
    // sort, scan_big, sort_stable; per precision direct, type3, toeplitz and 4 jobs x 3 dims; per dim and
    // width spread/interp x gm/sm, and spread od, each complex and real-valued
    assert_eq!(
        mods.len(),
        3 + 2 * (3 + 4 * 3) + 2 * (2 * 2 + 1) * 3 * (11 + 15),
        "module count"
    );
    // No combined module is left (a plan would JIT kernels it never launches).
    for (name, _) in &mods {
        assert!(
            !name.starts_with("si_")
                || [
                    "_spread_gm",
                    "_spread_sm",
                    "_spread_od",
                    "_interp_gm",
                    "_interp_sm"
                ]
                .iter()
                .any(|t| name.ends_with(t)),
            "module {name}: si modules are per direction and method"
        );
        assert!(
            !name.starts_with("prep"),
            "module {name}: prep is split by job"
        );
    }
    let expect = expected_archs();
    for (name, blobs) in &mods {
        let fatbins: Vec<&Blob> = blobs.iter().filter(|b| b.kind == 2).collect();
        let ptx: Vec<&Blob> = blobs.iter().filter(|b| b.kind == 1).collect();
        // No module has several sources since issue 12 (sort is one translation unit); the
        // checks stay for one that would (its PTX then comes as one blob per source).
        let multi_source = false;
        assert_eq!(fatbins.len(), aot as usize, "{name}: fatbin count");
        if let Some(fb) = fatbins.first() {
            let images = fatbuild::fatbin::parse(fb.data).unwrap_or_else(|e| panic!("{name}: {e}"));
            let mut elf: Vec<u32> = images
                .iter()
                .filter(|i| i.kind == fatbuild::fatbin::ImageKind::Elf)
                .map(|i| i.sm)
                .collect();
            elf.sort();
            let n_ptx = images
                .iter()
                .filter(|i| i.kind == fatbuild::fatbin::ImageKind::Ptx)
                .count();
            if let Some(want) = &expect {
                assert_eq!(&elf, want, "{name}: ELF images");
            }
            assert!(!elf.is_empty(), "{name}: no ELF image");
            let want_ptx = usize::from(jit && !multi_source);
            assert_eq!(n_ptx, want_ptx, "{name}: PTX images in the fatbin");
            assert_eq!(images.len(), elf.len() + n_ptx, "{name}: other images");
        }
        // PTX blobs: one per source where the fatbin does not carry it.
        let want_ptx_blobs = if !jit {
            0
        } else if !aot || multi_source {
            if multi_source {
                2
            } else {
                1
            }
        } else {
            0
        };
        assert_eq!(
            ptx.len(),
            want_ptx_blobs,
            "{name}: PTX blobs {:?}",
            ptx.iter().map(|b| &b.label).collect::<Vec<_>>()
        );
        for p in ptx {
            let text = std::str::from_utf8(p.data).expect("PTX is text");
            assert!(
                text.contains(".version") && text.contains(".target"),
                "{name}: not PTX"
            );
        }
    }
    // The kernels a plan launches are there by their extern "C" names (read from the PTX,
    // which an nvrtc-only build has none of: NVRTC compiles them at run time).
    if !(jit || aot) {
        println!("{} modules, mode {mode}, no images", mods.len());
        return;
    }
    let kernels = all_ptx_or_manifest_entries(&man);
    for k in [
        "wf_bin_scan",
        "wf_poison_u32",
        "wf_scan_big_reduce",
        "wf_scan_big_tiles",
        "wf_scan_big_down",
        "wf_bin_scatter_f32",
        "wf_sort_unpack_f64",
        "wf_bin_count_f32",
        "wf_deconvolve_f64",
        "wf_amplify_f32",
        "wf_deconvolve_half_f32",
        "wf_amplify_half_f64",
        "wf_stable_hist",
        "wf_stable_rowscan",
        "wf_stable_scatter",
        "wf_direct_t1_f64",
        "wf_direct_t2_f32",
    ] {
        assert!(kernels.contains(k), "kernel {k} not embedded");
    }
    // Each si module holds its direction's kernel for its method and nothing else, both named
    // by kernels/module_names.h (what the C core loads).
    let cases = [
        (2, "f32", 6),
        (2, "f32", 7),
        (3, "f32", 7),
        (1, "f32", 12),
        (3, "f64", 10),
    ];
    for (dim, p, w) in cases.into_iter().chain([
        (3, "f64", 11),
        (1, "f64", 16),
        (3, "f64", 16),
        (2, "f32r", 7),
        (3, "f32r", 7),
        (1, "f64r", 16),
        (2, "f64r", 10),
        (3, "f64r", 11),
    ]) {
        for (part, method) in SI_KINDS {
            let (module, entry) = module_names::si_names(dim, p, w, part, method);
            let got = manifest_kernels(&man, &module);
            assert_eq!(got, [entry], "kernels of {module}");
        }
    }
    // The binning module holds setpts' three kernels; deconvolve and amplify two each (complex
    // data, and the half spectrum of real data).
    for (dim, p) in [(1, "f32"), (3, "f64")] {
        let mut got = manifest_kernels(&man, &format!("bin_{dim}d_{p}"));
        got.sort();
        let want = [
            format!("wf_bin_count_{p}"),
            format!("wf_bin_scatter_{p}"),
            format!("wf_sort_unpack_{p}"),
        ];
        assert_eq!(got, want, "kernels of bin_{dim}d_{p}");
        for job in ["deconvolve", "amplify"] {
            let mut got = manifest_kernels(&man, &format!("{job}_{dim}d_{p}"));
            got.sort();
            assert_eq!(
                got,
                [format!("wf_{job}_{p}"), format!("wf_{job}_half_{p}")],
                "kernels of {job}_{dim}d_{p}"
            );
        }
    }
    // The width the points take: the gather and the choice, per dimension and precision.
    for (dim, p) in [(1, "f32"), (2, "f64"), (3, "f32")] {
        let mut got = manifest_kernels(&man, &format!("offsets_{dim}d_{p}"));
        got.sort();
        assert_eq!(
            got,
            [
                format!("wf_offsets_choose_{p}"),
                format!("wf_offsets_gather_{p}")
            ],
            "kernels of offsets_{dim}d_{p}"
        );
    }
    // The multi-block scan is a module of its own (only plans with many bins load it); `sort`
    // keeps the one-block scan and the NaN pass.
    let mut got = manifest_kernels(&man, "scan_big");
    got.sort();
    assert_eq!(
        got,
        [
            "wf_scan_big_down",
            "wf_scan_big_reduce",
            "wf_scan_big_tiles"
        ],
        "kernels of scan_big"
    );
    let mut got = manifest_kernels(&man, "sort");
    got.sort();
    assert_eq!(got, ["wf_bin_scan", "wf_poison_u32"], "kernels of sort");
    // The stable ranks of deterministic plans are a module of their own.
    let mut got = manifest_kernels(&man, "sort_stable");
    got.sort();
    assert_eq!(
        got,
        ["wf_stable_hist", "wf_stable_rowscan", "wf_stable_scatter"],
        "kernels of sort_stable"
    );
    println!("{} modules, mode {mode}, archs {:?}", mods.len(), expect);
}

/// The mode string of this build's features, as fatbuild spells it.
fn build_mode() -> String {
    let parts = [
        (cfg!(feature = "aot"), "aot"),
        (cfg!(feature = "jit"), "jit"),
        (cfg!(feature = "nvrtc"), "nvrtc"),
    ];
    let on: Vec<&str> = parts.iter().filter(|p| p.0).map(|p| p.1).collect();
    on.join("+")
}

/// The text of the JSON array after `"key":[` in `json` (no nested arrays in ours).
fn json_array<'a>(json: &'a str, key: &str) -> &'a str {
    let start = json
        .find(&format!("\"{key}\":["))
        .unwrap_or_else(|| panic!("no {key} in {json}"))
        + key.len()
        + 4;
    &json[start..start + json[start..].find(']').unwrap()]
}

/// The strings of a JSON array of plain strings.
fn json_strings(array: &str) -> Vec<String> {
    array
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|s| s.trim_matches('"').to_string())
        .collect()
}

/// With `nvrtc`, the manifest lists every kernel source and header the modules include, with
/// their sizes, and a digest that matches kernels/ on disk; each module names its translation
/// units and NVRTC options. Without it, none.
#[test]
fn embedded_sources_match_the_kernels_dir() {
    let man = manifest();
    let files = json_array(&man, "files");
    let digest_at = man.find("\"sources_digest\":\"").expect("sources_digest") + 18;
    let digest = &man[digest_at..digest_at + man[digest_at..].find('"').unwrap()];
    if !cfg!(feature = "nvrtc") {
        assert_eq!((files, digest), ("", ""), "{man}");
        assert!(man.contains("\"nvrtc_sources\":[],\"nvrtc_options\":[]"));
        return;
    }
    // nvrtc alone: no toolkit built anything; with jit/aot both images and sources are there.
    let images = cfg!(feature = "jit") || cfg!(feature = "aot");
    assert_eq!(man.contains("\"toolkit\":\"\""), !images, "{man}");
    assert_eq!(man.contains("\"blobs\":[]"), !images, "{man}");
    // {"name":"common.cuh","bytes":N},...
    let kernels = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels");
    let mut listed = Vec::new();
    for item in files.split("},").filter(|s| !s.is_empty()) {
        let name = item.split('"').nth(3).expect("file name");
        let bytes: usize = item
            .rsplit(':')
            .next()
            .unwrap()
            .trim_end_matches('}')
            .parse()
            .unwrap();
        let text = std::fs::read(kernels.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(bytes, text.len(), "{name}: embedded size");
        listed.push((name.to_string(), text));
    }
    let names: Vec<&str> = listed.iter().map(|(n, _)| n.as_str()).collect();
    for want in [
        "common.cuh",
        "kernel_shape.h", // the kernel's one definition, a plain C header the host includes too
        "smr_shape.h",    // the register tile's table, which the host reads too
        "direct.cu",
        "prep.cu",
        "scan.cuh",
        "scan_big.cu",
        "sort.cu",
        "sort_stable.cu",
        "spreadinterp.cu",
        "spreadinterp/od_spread.cuh",
        "spreadinterp/point.cuh",
        "spreadinterp/tile.cuh",
        "spreadinterp/sm_interp.cuh",
        "spreadinterp/smr_spread.cuh",
        "type3.cu",
    ] {
        assert!(names.contains(&want), "{want} not embedded: {names:?}");
    }
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "files are sorted by name");
    let recomputed =
        fatbuild::sources_digest(listed.iter().map(|(n, t)| (n.as_str(), t.as_slice())));
    assert_eq!(
        digest, recomputed,
        "the embedded files differ from kernels/"
    );
    // Per module: translation units and options.
    let module = |name: &str| {
        let at = man.find(&format!("{{\"name\":\"{name}\",")).expect(name);
        let rest = &man[at + 1..];
        &rest[..rest.find("{\"name\":").unwrap_or(rest.len())]
    };
    let si = module("si_2d_f32_w6_spread_sm");
    assert_eq!(
        json_strings(json_array(si, "nvrtc_sources")),
        ["spreadinterp.cu"]
    );
    let opts = json_strings(json_array(si, "nvrtc_options"));
    for want in [
        "-DWF_DIM=2",
        "-DWF_PREC=32",
        "-DWF_W=6",
        "-DWF_SI_PART=WF_SI_SPREAD",
        "-DWF_SI_METHOD=WF_SI_SM",
    ] {
        assert!(opts.iter().any(|o| o == want), "{want} not in {opts:?}");
    }
    let sort = module("sort");
    assert_eq!(json_strings(json_array(sort, "nvrtc_sources")), ["sort.cu"]);
    let scan_big = module("scan_big");
    assert_eq!(
        json_strings(json_array(scan_big, "nvrtc_sources")),
        ["scan_big.cu"]
    );
    println!("{} files embedded, digest {digest}", listed.len());
}

/// The `"kernels"` list of module `name` in the manifest (fatbuild's format: `{"name":..,
/// "sources":[..],"defines":{..},"kernels":[..],"blobs":[..]}`).
fn manifest_kernels(man: &str, name: &str) -> Vec<String> {
    let key = format!("{{\"name\":\"{name}\",");
    let start = man
        .find(&key)
        .unwrap_or_else(|| panic!("module {name} not in the manifest"));
    let rest = &man[start..];
    let open = "\"kernels\":[";
    let k = rest.find(open).expect("a kernels list") + open.len();
    let end = rest[k..].find(']').expect("the end of the kernels list");
    rest[k..k + end]
        .split(',')
        .map(|s| s.trim_matches('"').to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// The manifest lists kernel entry names (parsed from the PTX at build time).
fn all_ptx_or_manifest_entries(man: &str) -> String {
    man.to_string()
}

#[test]
fn fatbin_parser_rejects_garbage() {
    assert!(fatbuild::fatbin::parse(b"not a fatbin").is_err());
    assert!(fatbuild::fatbin::parse(&[0x50, 0xed, 0x55, 0xba, 1, 0]).is_err());
}
