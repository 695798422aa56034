//! The spreading modules' and entry points' names by `kernels/module_names.h`'s rule (printf
//! formats that build.rs and the C core's `wf_si_names` read too), for the tests.

const HEADER: &str = include_str!("../../kernels/module_names.h");

/// The header's format `name` with its `%d`/`%s` conversions replaced by `args` in order.
fn fill(name: &str, args: &[String]) -> String {
    let fmt = HEADER
        .lines()
        .find_map(|l| l.strip_prefix("#define ")?.strip_prefix(name))
        .and_then(|v| v.trim().strip_prefix('"')?.strip_suffix('"'))
        .unwrap_or_else(|| panic!("kernels/module_names.h defines no string {name}"));
    let mut pieces = fmt.split('%');
    let mut out = pieces.next().unwrap_or_default().to_string();
    let rest: Vec<&str> = pieces.collect();
    assert_eq!(rest.len(), args.len(), "{name}: {fmt}");
    for (piece, arg) in rest.iter().zip(args) {
        out += arg;
        out += &piece[1..]; // after the conversion letter
    }
    out
}

/// (module, entry point) of the spreading kernel of `dim`, `prec` ("f32", "f64"), `width`,
/// `dir` ("spread", "interp") and `method` ("gm", "sm", "od").
pub fn si_names(dim: usize, prec: &str, width: usize, dir: &str, method: &str) -> (String, String) {
    let (d, w, p) = (dim.to_string(), width.to_string(), prec.to_string());
    let (dir, method) = (dir.to_string(), method.to_string());
    let module = fill(
        "WF_SI_MODULE_FMT",
        &[d.clone(), p.clone(), w.clone(), dir.clone(), method.clone()],
    );
    (module, fill("WF_SI_ENTRY_FMT", &[dir, method, d, p, w]))
}
