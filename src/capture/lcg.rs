//! The stream-overlap lab's kernel arithmetic: a 32-bit LCG, stepped one at a time (what the
//! kernel computes) and jumped by its closed form (what the host checks the kernel's output
//! against). The simulator and the real backend both compute it; the lab is `lab::streams`.

/// LCG multiplier (Numerical Recipes).
pub const LCG_A: u32 = 1_664_525;
/// LCG increment.
pub const LCG_C: u32 = 1_013_904_223;

/// `iters` steps of `x ← A·x + C (mod 2³²)`, one at a time: what the kernel computes.
pub fn lcg_iterate(mut x: u32, iters: u32) -> u32 {
    for _ in 0..iters {
        x = x.wrapping_mul(LCG_A).wrapping_add(LCG_C);
    }
    x
}

/// The affine map `(a, c)` with `lcg_iterate(x, iters) == a·x + c (mod 2³²)` for every `x`,
/// by repeated squaring. Time: O(log iters).
///
/// ```
/// use worksheet::capture::lcg::{lcg_iterate, lcg_jump};
/// let (a, c) = lcg_jump(1000);
/// assert_eq!(a.wrapping_mul(7).wrapping_add(c), lcg_iterate(7, 1000));
/// ```
pub fn lcg_jump(mut iters: u32) -> (u32, u32) {
    // Result map (ra, rc) and the current power (pa, pc) of the step map.
    let (mut ra, mut rc) = (1_u32, 0_u32);
    let (mut pa, mut pc) = (LCG_A, LCG_C);
    while iters > 0 {
        if iters & 1 == 1 {
            // Apply the power after the result: x → pa·(ra·x + rc) + pc.
            ra = pa.wrapping_mul(ra);
            rc = pa.wrapping_mul(rc).wrapping_add(pc);
        }
        // Square the power: x → pa·(pa·x + pc) + pc.
        pc = pa.wrapping_mul(pc).wrapping_add(pc);
        pa = pa.wrapping_mul(pa);
        iters >>= 1;
    }
    (ra, rc)
}

/// The lab's input word `i`: distinct, spread bits.
pub fn input_word(i: usize) -> u32 {
    (i as u32).wrapping_mul(2_654_435_761) ^ 0x5bd1_e995
}
