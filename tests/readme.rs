//! README's C and Python examples are the files the tests build and run (examples/c/hello.c by
//! examples/c/run.sh, examples/python/type1_2d.py by python/tests); its Rust example is a
//! doctest (src/lib.rs includes README.md under cfg(doctest)).

fn block(readme: &str, lang: &str) -> String {
    let start = readme
        .find(&format!("```{lang}\n"))
        .unwrap_or_else(|| panic!("no {lang} block"));
    let body = &readme[start + lang.len() + 4..];
    body[..body.find("\n```").unwrap()].to_string()
}

#[test]
fn readme_examples_are_the_tested_files() {
    let readme = std::fs::read_to_string("README.md").unwrap();
    for (lang, file) in [
        ("c", "examples/c/hello.c"),
        ("python", "examples/python/type1_2d.py"),
    ] {
        let want = std::fs::read_to_string(file).unwrap();
        assert_eq!(
            block(&readme, lang),
            want.trim_end(),
            "README's {lang} block differs from {file}"
        );
    }
    assert!(block(&readme, "rust").contains("Plan::<f32>::type1"));
}
