//! The README stays a short front page whose examples are tested and whose links lead
//! somewhere: its C example is examples/c/hello.c (built and run by examples/c/run.sh), its Rust
//! example a doctest (src/lib.rs includes README.md under cfg(doctest)), its Python, JAX and
//! PyTorch blocks run by python/tests/test_docs.py, and every relative link names a file of the
//! checkout (the docs site itself is checked by `just docs`, which fails on a broken link).

use std::path::Path;

fn block(readme: &str, lang: &str) -> String {
    let start = readme
        .find(&format!("```{lang}\n"))
        .unwrap_or_else(|| panic!("no {lang} block"));
    let body = &readme[start + lang.len() + 4..];
    body[..body.find("\n```").unwrap()].to_string()
}

fn readme() -> String {
    std::fs::read_to_string("README.md").unwrap()
}

#[test]
fn readme_examples_are_the_tested_files() {
    let readme = readme();
    let want = std::fs::read_to_string("examples/c/hello.c").unwrap();
    assert_eq!(
        block(&readme, "c"),
        want.trim_end(),
        "README's C block differs from examples/c/hello.c"
    );
    assert!(block(&readme, "rust").contains("Plan::<f32>::type1"));
}

/// The targets of the README's `[text](target)` links that are not URLs, without `#anchor`.
fn relative_links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        let end = rest.find(')').expect("unclosed link");
        let target = &rest[..end];
        if !target.contains("://") && !target.starts_with('#') {
            out.push(target.split('#').next().unwrap().to_string());
        }
    }
    out
}

#[test]
fn readme_links_name_files_of_the_checkout() {
    let links = relative_links(&readme());
    assert!(links.iter().any(|l| l == "docs/index.md"), "{links:?}");
    for l in &links {
        assert!(
            Path::new(l).exists(),
            "README links to {l}, which does not exist"
        );
    }
    assert_eq!(
        relative_links("[a](b.md#c) [d](https://e/f) [g](#h)"),
        ["b.md"]
    );
}

#[test]
fn readme_is_a_short_front_page() {
    // About 150 lines: detail belongs on a page under docs/.
    let n = readme().lines().count();
    assert!(n <= 160, "README.md has {n} lines: move detail to docs/");
}
