//! docs/fatbuild.md shows this crate's build script: it must be the file, line for line (the
//! leading doc comment aside), so the page cannot drift from what CI builds.

use std::path::Path;

#[test]
fn the_docs_show_this_build_script() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let Ok(page) = std::fs::read_to_string(dir.join("../../docs/fatbuild.md")) else {
        eprintln!("SKIPPED: no docs/fatbuild.md beside this crate");
        return;
    };
    let build = std::fs::read_to_string(dir.join("build.rs")).unwrap();
    let code: String = build
        .lines()
        .filter(|l| !l.starts_with("//!"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(
        page.contains(&format!("```text\n{code}```")),
        "docs/fatbuild.md must show build.rs as it is:\n{code}"
    );
}
