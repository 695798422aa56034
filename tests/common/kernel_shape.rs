//! The spreading kernel of `kernels/kernel_shape.h` for the Rust tests, read from the header so
//! that no test restates it (the Python twin is `kernels/test/kernel_shape.py`). The header's
//! `WF_KERNEL_EXPR` functions are one `return EXPR;` each, EXPR plain arithmetic over the
//! parameters, the `WF_KERNEL_*` numbers and `exp`, `sinh`, `sqrt`: parsed here once and
//! evaluated in the order C evaluates them.

use std::collections::HashMap;

const HEADER: &str = include_str!("../../kernels/kernel_shape.h");

/// An expression of the header.
#[derive(Debug)]
enum Expr {
    Num(f64),
    Var(String),
    Neg(Box<Expr>),
    Bin(char, Box<Expr>, Box<Expr>),
    Call(String, Box<Expr>),
}

/// A recursive-descent parser of C's `+ - * /`, unary minus, parentheses and calls.
struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn peek(&mut self) -> Option<u8> {
        while self.s.get(self.i).is_some_and(|c| c.is_ascii_whitespace()) {
            self.i += 1;
        }
        self.s.get(self.i).copied()
    }
    fn expect(&mut self, c: u8) {
        assert_eq!(
            self.peek(),
            Some(c),
            "kernel_shape.h: expected `{}`",
            c as char
        );
        self.i += 1;
    }
    fn sum(&mut self) -> Expr {
        let mut e = self.product();
        while let Some(op @ (b'+' | b'-')) = self.peek() {
            self.i += 1;
            e = Expr::Bin(op as char, Box::new(e), Box::new(self.product()));
        }
        e
    }
    fn product(&mut self) -> Expr {
        let mut e = self.unary();
        while let Some(op @ (b'*' | b'/')) = self.peek() {
            self.i += 1;
            e = Expr::Bin(op as char, Box::new(e), Box::new(self.unary()));
        }
        e
    }
    fn unary(&mut self) -> Expr {
        match self.peek() {
            Some(b'-') => {
                self.i += 1;
                Expr::Neg(Box::new(self.unary()))
            }
            Some(b'(') => {
                self.i += 1;
                let e = self.sum();
                self.expect(b')');
                e
            }
            Some(c) if c.is_ascii_digit() || c == b'.' => {
                let start = self.i;
                let mut prev = 0u8;
                while let Some(&c) = self.s.get(self.i) {
                    let exponent_sign = (c == b'-' || c == b'+') && (prev == b'e' || prev == b'E');
                    if !(c.is_ascii_digit() || c == b'.' || c == b'e' || c == b'E' || exponent_sign)
                    {
                        break;
                    }
                    prev = c;
                    self.i += 1;
                }
                let text = std::str::from_utf8(&self.s[start..self.i]).unwrap();
                Expr::Num(text.parse().expect("kernel_shape.h: a number"))
            }
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => {
                let start = self.i;
                while self
                    .s
                    .get(self.i)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
                {
                    self.i += 1;
                }
                let name = std::str::from_utf8(&self.s[start..self.i])
                    .unwrap()
                    .to_string();
                if self.peek() == Some(b'(') {
                    self.i += 1;
                    let arg = self.sum();
                    self.expect(b')');
                    Expr::Call(name, Box::new(arg))
                } else {
                    Expr::Var(name)
                }
            }
            c => panic!("kernel_shape.h: unexpected {:?}", c.map(|c| c as char)),
        }
    }
}

impl Expr {
    fn eval(&self, vars: &HashMap<String, f64>) -> f64 {
        match self {
            Expr::Num(v) => *v,
            Expr::Var(n) => *vars
                .get(n)
                .unwrap_or_else(|| panic!("kernel_shape.h: unknown name {n}")),
            Expr::Neg(e) => -e.eval(vars),
            Expr::Bin(op, a, b) => {
                let (a, b) = (a.eval(vars), b.eval(vars));
                match op {
                    '+' => a + b,
                    '-' => a - b,
                    '*' => a * b,
                    _ => a / b,
                }
            }
            Expr::Call(f, e) => {
                let x = e.eval(vars);
                match f.as_str() {
                    "exp" => x.exp(),
                    "sinh" => x.sinh(),
                    "sqrt" => x.sqrt(),
                    _ => panic!("kernel_shape.h: unknown function {f}"),
                }
            }
        }
    }
}

/// The header's numbers and one-expression functions.
pub struct KernelShape {
    numbers: HashMap<String, f64>,
    funcs: HashMap<String, (Vec<String>, Expr)>,
}

impl KernelShape {
    /// Reads `kernels/kernel_shape.h` (embedded at compile time).
    pub fn load() -> KernelShape {
        let text = strip_comments(HEADER);
        let mut numbers = HashMap::new();
        for line in text.lines() {
            let mut w = line.split_whitespace();
            if let (Some("#define"), Some(name), Some(v), None) =
                (w.next(), w.next(), w.next(), w.next())
            {
                if let (true, Ok(v)) = (name.starts_with("WF_KERNEL_"), v.parse::<f64>()) {
                    numbers.insert(name.to_string(), v);
                }
            }
        }
        let mut funcs = HashMap::new();
        for part in text.split("WF_KERNEL_EXPR double").skip(1) {
            let (name, rest) = part.split_once('(').expect("kernel_shape.h: a function");
            let (params, rest) = rest.split_once(')').expect("kernel_shape.h: parameters");
            let params = params
                .split(',')
                .map(|p| p.split_whitespace().last().unwrap_or("").to_string())
                .collect();
            let body = rest.split_once("return").expect("kernel_shape.h: return").1;
            let body = body.split_once(';').expect("kernel_shape.h: `;`").0;
            let mut p = Parser {
                s: body.as_bytes(),
                i: 0,
            };
            let e = p.sum();
            assert_eq!(p.peek(), None, "kernel_shape.h: {name}: trailing text");
            funcs.insert(name.trim().to_string(), (params, e));
        }
        for want in [
            "wf_kernel_beta",
            "wf_kernel_def",
            "wf_kernel_edge",
            "wf_kernel_kink",
        ] {
            assert!(funcs.contains_key(want), "kernel_shape.h: no {want}");
        }
        KernelShape { numbers, funcs }
    }

    fn call(&self, name: &str, args: &[f64]) -> f64 {
        let (params, e) = &self.funcs[name];
        let mut vars = self.numbers.clone();
        vars.extend(params.iter().cloned().zip(args.iter().copied()));
        e.eval(&vars)
    }

    /// `wf_kernel_beta`: the shape parameter of width `w` at upsampling factor `sigma`.
    pub fn beta(&self, w: i32, sigma: f64) -> f64 {
        self.call("wf_kernel_beta", &[w as f64, sigma])
    }

    /// The kernel at offset `z` (fine-grid points) for width `w`: `wf_kernel_def` at
    /// a = z / (w/2), 0 where |a| >= 1.
    pub fn phi(&self, z: f64, w: f64, beta: f64) -> f64 {
        let a = 2.0 * z / w;
        if a.abs() >= 1.0 {
            return 0.0;
        }
        self.call("wf_kernel_def", &[a, beta])
    }
}

/// The text without its `/* */` comments.
fn strip_comments(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find("/*") {
        out.push_str(&rest[..i]);
        rest = rest[i..].split_once("*/").map_or("", |r| r.1);
    }
    out + rest
}
