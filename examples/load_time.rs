//! Measures what a user's first plan costs: driver init, then creating a 2D type-1 f32 plan
//! (which loads — in `jit` builds JIT-compiles — the modules it needs), then prints
//! warpfft_runtime_info with each module's image and load time. Run it with an empty
//! `WARPFFT_CACHE_DIR` (a `jit` build keeps its linked modules in warpfft's kernel cache) for a
//! cold JIT, twice with the same fresh directory for a warm one.
use std::ffi::CStr;
use std::time::Instant;
use warpfft::sys;

fn last_error() -> String {
    unsafe { CStr::from_ptr(sys::warpfft_last_error()) }
        .to_string_lossy()
        .into_owned()
}

fn main() {
    let t = Instant::now();
    if unsafe { sys::warpfft_init(0) } != sys::WARPFFT_SUCCESS {
        println!("no GPU: {}", last_error());
        return;
    }
    let init_ms = t.elapsed().as_secs_f64() * 1e3;
    let n = [1024i64, 1024, 1];
    let mut plan: sys::warpfft_plan = std::ptr::null_mut();
    let t = Instant::now();
    let st = unsafe {
        sys::warpfft_plan_create(
            1,
            2,
            n.as_ptr(),
            1,
            1,
            1e-5,
            sys::WARPFFT_F32,
            std::ptr::null(),
            &mut plan,
        )
    };
    let plan_ms = t.elapsed().as_secs_f64() * 1e3;
    if st != sys::WARPFFT_SUCCESS {
        println!("plan_create failed: {}", last_error());
        std::process::exit(1);
    }
    // The report's size first (it embeds the build manifest: ~100 KB with 335 modules).
    let mut need = 0usize;
    unsafe { sys::warpfft_runtime_info(0, std::ptr::null_mut(), 0, &mut need) };
    let mut buf = vec![0u8; need.max(1)];
    let st = unsafe {
        sys::warpfft_runtime_info(
            0,
            buf.as_mut_ptr() as *mut _,
            buf.len(),
            std::ptr::null_mut(),
        )
    };
    let info = unsafe { CStr::from_ptr(buf.as_ptr() as *const _) }.to_string_lossy();
    println!("init (cuInit + primary context): {init_ms:.1} ms");
    println!("first plan (module load/JIT + cuFFT plan + allocations): {plan_ms:.1} ms");
    // The report embeds the whole build manifest; print the parts about this run.
    let loaded = info
        .find("\"driver_version\"")
        .map_or(&info[..], |i| &info[i..]);
    println!("runtime_info (status {st}): {{{loaded}");
    unsafe { sys::warpfft_plan_destroy(plan) };
}
