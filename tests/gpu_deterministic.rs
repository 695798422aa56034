//! Deterministic plans (`PlanBuilder::deterministic`, issue 29) on a GPU: types 1, 2 and 3,
//! f32 and f64, 1D to 3D, batches of 2, on point sets dense enough that atomics would race
//! (half the points in a small cluster). For each case the outputs of
//!  - one plan executed twice, then after setting the same points again,
//!  - a second plan built with the same options (the plan cache hands it the first one's cuFFT
//!    plan and grid, or not),
//!  - a plan on another stream (`CU_STREAM_PER_THREAD`),
//!
//! must be the same bits; the output must meet `tol` against the exact sums (transforms 0 and
//! 1), and `PlanInfo` must report the option and, for types 1 and 3, output-driven spreading.
//! The default (non-deterministic) type-1 plans run the same comparison and print how often
//! their bits differed: what the option buys, not asserted (a run may happen to agree).
//! Skips visibly without a GPU.

#[macro_use]
mod common;
use common::{gpu_or_skip, stratified_sample, transform_error, Rng};
use warpfft::{Complex, Method, Plan, PlanBuilder, Real, TransformType};

const PI: f64 = std::f64::consts::PI;
const NTRANSF: usize = 2;
/// CU_STREAM_PER_THREAD: a valid stream handle without any CUDA bindings.
const PER_THREAD_STREAM: u64 = 2;

struct Case {
    ty: TransformType,
    n_modes: &'static [usize],
    dim: usize,
    m: usize,
    k: usize, // type 3 targets
}

const CASES: &[Case] = &[
    Case {
        ty: TransformType::Type1,
        n_modes: &[3000],
        dim: 1,
        m: 200_000,
        k: 0,
    },
    Case {
        ty: TransformType::Type1,
        n_modes: &[96, 64],
        dim: 2,
        m: 150_000,
        k: 0,
    },
    Case {
        ty: TransformType::Type1,
        n_modes: &[24, 20, 16],
        dim: 3,
        m: 60_000,
        k: 0,
    },
    Case {
        ty: TransformType::Type2,
        n_modes: &[3000],
        dim: 1,
        m: 100_000,
        k: 0,
    },
    Case {
        ty: TransformType::Type2,
        n_modes: &[96, 64],
        dim: 2,
        m: 60_000,
        k: 0,
    },
    Case {
        ty: TransformType::Type2,
        n_modes: &[24, 20, 16],
        dim: 3,
        m: 30_000,
        k: 0,
    },
    Case {
        ty: TransformType::Type3,
        n_modes: &[],
        dim: 1,
        m: 50_000,
        k: 4000,
    },
    Case {
        ty: TransformType::Type3,
        n_modes: &[],
        dim: 2,
        m: 40_000,
        k: 3000,
    },
    Case {
        ty: TransformType::Type3,
        n_modes: &[],
        dim: 3,
        m: 20_000,
        k: 2000,
    },
];

/// Half uniform in [-π, π)^d, half in a box of 0.05 per side (many points per fine-grid cell);
/// type 3 targets uniform in [-40, 40]^d.
fn points(rng: &mut Rng, dim: usize, m: usize) -> Vec<Vec<f64>> {
    (0..dim)
        .map(|d| {
            (0..m)
                .map(|j| {
                    if j % 2 == 0 {
                        rng.sym(PI)
                    } else {
                        0.3 + 0.1 * d as f64 + 0.05 * rng.uniform()
                    }
                })
                .collect()
        })
        .collect()
}

fn to_t<T: Real>(v: &[Vec<f64>]) -> Vec<Vec<T>> {
    v.iter()
        .map(|a| a.iter().map(|&x| T::from_f64(x)).collect())
        .collect()
}

/// One plan: build, set the points, execute `runs` times (with the points set again before the
/// last when `reset`); returns the outputs and the plan.
fn run<T: Real>(
    b: &PlanBuilder<T>,
    x: &[Vec<T>],
    s: &[Vec<T>],
    input: &[Complex<T>],
    runs: usize,
    reset: bool,
) -> (Vec<Vec<Complex<T>>>, Plan<T>) {
    let mut plan = b.build().expect("build");
    let set = |plan: &mut Plan<T>| {
        if plan.transform_type() == TransformType::Type3 {
            plan.set_points3(x, s).expect("set_points3")
        } else {
            plan.set_points(x).expect("set_points")
        }
    };
    set(&mut plan);
    let mut outs = Vec::new();
    for r in 0..runs {
        if reset && r + 1 == runs {
            set(&mut plan);
        }
        let len = match plan.transform_type() {
            TransformType::Type2 => plan.c_len().expect("points set"),
            _ => plan.fk_len(),
        };
        let mut out = vec![Complex::default(); len];
        plan.execute(input, &mut out).expect("execute");
        outs.push(out);
    }
    (outs, plan)
}

/// The indices where two outputs differ in any bit (their count).
fn differing<T: Real>(a: &[Complex<T>], b: &[Complex<T>]) -> usize {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .filter(|(p, q)| {
            let bits = |v: T| Into::<f64>::into(v).to_bits(); // f32 -> f64 is exact
            bits(p.re) != bits(q.re) || bits(p.im) != bits(q.im)
        })
        .count()
}

/// Relative l2 error of transform t against the exact sums at a stratified sample.
fn error_of<T: Real>(
    plan: &Plan<T>,
    input: &[Complex<T>],
    out: &[Complex<T>],
    t: usize,
    rng: &mut Rng,
) -> f64 {
    let n_in = input.len() / NTRANSF;
    let n_out = out.len() / NTRANSF;
    let sample: Vec<usize> = stratified_sample(rng, n_out as i64, 3000)
        .into_iter()
        .map(|i| i as usize)
        .collect();
    transform_error(plan, input, out, (n_in, n_out), t, &sample).expect("direct_sample")
}

fn builder<T: Real>(c: &Case, tol: f64) -> PlanBuilder<T> {
    let b = if c.ty == TransformType::Type3 {
        Plan::<T>::type3(c.dim)
    } else {
        Plan::<T>::builder(c.ty, c.n_modes)
    };
    b.tol(tol).ntransf(NTRANSF)
}

/// Runs every case in precision T; returns (cases, default-mode type-1 runs whose bits differed).
fn check_all<T: Real>(tol: f64, seed: u64) -> (usize, usize) {
    let mut default_differed = 0;
    for (i, c) in CASES.iter().enumerate() {
        let mut rng = Rng::new(seed + i as u64);
        let x = to_t::<T>(&points(&mut rng, c.dim, c.m));
        let s = to_t::<T>(
            &(0..c.dim)
                .map(|_| (0..c.k).map(|_| rng.sym(40.0)).collect())
                .collect::<Vec<Vec<f64>>>(),
        );
        let n_in = match c.ty {
            TransformType::Type2 => c.n_modes.iter().product::<usize>(),
            _ => c.m,
        };
        let input = rng.complex::<T>(NTRANSF * n_in);
        let what = format!("{:?} {}D {}", c.ty, c.dim, std::any::type_name::<T>());
        let det = builder::<T>(c, tol).deterministic(true);
        let (outs, plan) = run(&det, &x, &s, &input, 3, true);
        let info = plan.info().expect("info");
        assert!(info.deterministic, "{what}: info.deterministic");
        let spreads = c.ty != TransformType::Type2;
        assert_eq!(
            info.method == Method::OutputDriven,
            spreads,
            "{what}: method {:?}",
            info.method
        );
        let (again, _) = run(&det, &x, &s, &input, 1, false);
        // SAFETY: CU_STREAM_PER_THREAD is valid for the process's lifetime.
        let other = unsafe { det.clone().stream(PER_THREAD_STREAM) };
        let (streamed, _) = run(&other, &x, &s, &input, 1, false);
        for (name, o) in [
            ("a second execute", &outs[1]),
            ("an execute after setting the points again", &outs[2]),
            ("a second plan", &again[0]),
            ("a plan on another stream", &streamed[0]),
        ] {
            let n = differing(&outs[0], o);
            assert_eq!(n, 0, "{what}: {name} differs in {n} of {} outputs", o.len());
        }
        let err = (0..NTRANSF)
            .map(|t| error_of(&plan, &input, &outs[0], t, &mut rng))
            .fold(0.0, f64::max);
        let bound = tol.max(info.tol_floor);
        assert!(err <= bound, "{what}: error {err:.3e} > {bound:.1e}");
        let mut line = format!(
            "{what}: bitwise equal x4, error {err:.2e}, method {:?}",
            info.method
        );
        if c.ty == TransformType::Type1 {
            let (plain, _) = run(&builder::<T>(c, tol), &x, &s, &input, 4, false);
            let runs_differing = (1..plain.len())
                .filter(|&r| differing(&plain[0], &plain[r]) > 0)
                .count();
            default_differed += runs_differing;
            line += &format!("; default mode: {runs_differing} of 3 reruns differed");
        }
        eprintln!("{line}");
    }
    (CASES.len(), default_differed)
}

/// Every case in precision T, as `check_all`, with what the default mode did.
fn deterministic<T: Real>(tol: f64, seed: u64) {
    let (n, d) = check_all::<T>(tol, seed);
    eprintln!(
        "{}: {n} cases bitwise reproducible; default-mode type-1 reruns that differed: {d}",
        std::any::type_name::<T>()
    );
}

gpu_tests! {
    deterministic_f32: deterministic::<f32>(1e-5, 100);
    deterministic_f64: deterministic::<f64>(1e-9, 200);
}

/// Spread-only deterministic plans (the grid is the mode array): output-driven too.
#[test]
fn deterministic_spread_only() {
    if !gpu_or_skip("deterministic_spread_only") {
        return;
    }
    let mut rng = Rng::new(7);
    let x = to_t::<f32>(&points(&mut rng, 2, 50_000));
    let input = rng.complex::<f32>(NTRANSF * 50_000);
    let b = Plan::<f32>::type1(&[64, 48])
        .tol(1e-5)
        .ntransf(NTRANSF)
        .spread_interp_only(true)
        .deterministic(true);
    let (outs, plan) = run(&b, &x, &[], &input, 3, true);
    assert_eq!(plan.info().unwrap().method, Method::OutputDriven);
    for o in &outs[1..] {
        assert_eq!(differing(&outs[0], o), 0);
    }
}
