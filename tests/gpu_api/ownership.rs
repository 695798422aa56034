//! Who owns points and buffers: device points moved into a plan and taken back, host points
//! reused and replaced, n_points after take_points, DeviceBuffer round trips and zeros, plans
//! moved to other threads.

use crate::common::Rng;
use crate::{check_batch, PI};
use warpfft::{Complex, DeviceBuffer, Error, Plan};

#[test]
fn moved_points_can_be_taken_back() {
    require_gpu!();
    let mut rng = Rng::from_state(5);
    let m = 300;
    let x: Vec<f64> = rng.points(m, PI);
    let c = rng.complex::<f64>(m);
    let mut plan = Plan::<f64>::type1(&[40]).tol(1e-9).build().unwrap();
    plan.set_device_points([DeviceBuffer::from_slice(&x).unwrap()])
        .unwrap();
    let mut fk1 = vec![Complex::default(); 40];
    plan.execute(&c, &mut fk1).unwrap();

    let taken = plan.take_points();
    assert_eq!(taken.len(), 1);
    assert_eq!(taken[0].to_vec().unwrap(), x);
    let mut fk2 = vec![Complex::default(); 40];
    assert!(matches!(
        plan.execute(&c, &mut fk2),
        Err(Error::NoPoints(_))
    ));

    plan.set_device_points(taken).unwrap();
    plan.execute(&c, &mut fk2).unwrap();
    // Same points, same result (up to the order of floating-point atomics).
    let d = warpfft::relative_l2_error(&fk2, &fk1);
    assert!(d < 1e-12, "results differ by {d:e}");
}

#[test]
fn host_points_are_reused_and_replaced() {
    require_gpu!();
    let mut rng = Rng::from_state(9);
    let mut plan = Plan::<f32>::type2(&[24, 24]).tol(1e-5).build().unwrap();
    let fk = rng.complex::<f32>(24 * 24);
    for m in [500, 500, 800, 10] {
        let x: Vec<f32> = rng.points(m, PI);
        let y: Vec<f32> = rng.points(m, PI);
        plan.set_points(&[&x, &y]).unwrap();
        assert_eq!(plan.n_points(), Some(m));
        let mut c = vec![Complex::default(); m];
        plan.execute(&fk, &mut c).unwrap();
        let err = check_batch(&plan, &fk, &c, &mut rng);
        assert!(err <= 1e-5, "M = {m}: error {err:.3e}");
    }
}

/// `n_points()` and `info().n_points` agree: after set_points, and after take_points (the C plan
/// still holds the taken arrays' addresses, but the Plan has no points).
#[test]
fn n_points_and_info_agree_after_take_points() {
    require_gpu!();
    let mut plan = Plan::<f32>::type1(&[16]).tol(1e-4).build().unwrap();
    assert_eq!(plan.info().unwrap().n_points, None);
    plan.set_points(&[&[0.1f32, 0.2, 0.3]]).unwrap();
    assert_eq!(plan.n_points(), Some(3));
    assert_eq!(plan.info().unwrap().n_points, Some(3));
    let taken = plan.take_points();
    assert_eq!(taken.len(), 1);
    assert_eq!(plan.n_points(), None);
    assert_eq!(plan.info().unwrap().n_points, None);
}

#[test]
fn device_buffer_round_trip() {
    require_gpu!();
    let data: Vec<Complex<f64>> = (0..1000)
        .map(|i| Complex::new(i as f64, -(i as f64)))
        .collect();
    let mut buf = DeviceBuffer::from_slice(&data).unwrap();
    assert_eq!(buf.len(), 1000);
    assert_eq!(buf.device(), 0);
    assert_ne!(buf.as_raw(), 0);
    assert_eq!(buf.to_vec().unwrap(), data);
    let rev: Vec<_> = data.iter().rev().copied().collect();
    buf.copy_from(&rev).unwrap();
    let mut back = vec![Complex::default(); 1000];
    buf.copy_to(&mut back).unwrap();
    assert_eq!(back, rev);
    assert!(DeviceBuffer::<f32>::zeros(7)
        .unwrap()
        .to_vec()
        .unwrap()
        .iter()
        .all(|&v| v == 0.0));
    let empty = DeviceBuffer::<f32>::from_slice(&[]).unwrap();
    assert!(empty.is_empty());
    assert_eq!(empty.to_vec().unwrap(), Vec::<f32>::new());
    // Buffers are Send + Sync: read one from another thread.
    let shared = std::sync::Arc::new(buf);
    let s2 = shared.clone();
    let v = std::thread::spawn(move || s2.to_vec().unwrap())
        .join()
        .unwrap();
    assert_eq!(v, rev);
}

/// `DeviceBuffer::zeros` zeroes on the device (no host buffer of that size), also memory that
/// held data before.
#[test]
fn device_buffer_zeros_are_zero() {
    require_gpu!();
    for _ in 0..3 {
        let junk = DeviceBuffer::from_slice(&vec![Complex::new(1.5f64, -2.5); 1 << 16]).unwrap();
        drop(junk);
        let z = DeviceBuffer::<Complex<f64>>::zeros(1 << 16).unwrap();
        assert!(z
            .to_vec()
            .unwrap()
            .iter()
            .all(|v| v.re == 0.0 && v.im == 0.0));
    }
    assert!(DeviceBuffer::<f32>::zeros(0).unwrap().is_empty());
}

#[test]
fn plans_move_between_threads_and_run_in_parallel() {
    require_gpu!();
    let handles: Vec<_> = (0..3u64)
        .map(|i| {
            let mut plan = Plan::<f32>::type1(&[64]).tol(1e-5).build().unwrap();
            std::thread::spawn(move || {
                let mut rng = Rng::from_state(100 + i);
                let x: Vec<f32> = rng.points(1000, PI);
                let c = rng.complex::<f32>(1000);
                plan.set_points(&[&x]).unwrap();
                let mut fk = vec![Complex::default(); 64];
                plan.execute(&c, &mut fk).unwrap();
                check_batch(&plan, &c, &fk, &mut rng)
            })
        })
        .collect();
    for h in handles {
        let err = h.join().unwrap();
        assert!(err <= 1e-5, "error {err:.3e}");
    }
}
