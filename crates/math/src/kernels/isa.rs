//! Run-time choice of the instruction-set level.
//!
//! The levels are nested: each one requires every CPU feature of the levels below it, so
//! "the best level ≤ x" is always well defined and `min` of two levels is a valid level.

use std::fmt;
use std::sync::OnceLock;

/// Instruction-set level chosen at run time.
///
/// Ordered from lowest to highest; a level is usable only if every lower one is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Isa {
    /// Plain Rust loops (the compiler may still auto-vectorise them for the baseline target).
    Portable,
    /// AVX2, 256-bit vectors; 16-bit products with `vpmaddwd`.
    Avx2,
    /// AVX-512 F, BW, DQ and VL, 512-bit vectors; 16-bit products with `vpmaddwd`.
    Avx512,
    /// AVX-512 as above plus VNNI: 16-bit multiply-accumulate in one `vpdpwssd`.
    Avx512Vnni,
    /// AVX-512 VNNI plus AMX-TILE and AMX-INT8 granted by the OS: the 16-bit ring matrix
    /// product on the tile unit, as three 8-bit tile products.
    Amx,
}

/// Environment variable that forces a lower level: `portable`, `avx2`, `avx512`, `avx512vnni` or
/// `amx`.
///
/// A level above what the CPU supports is clamped to the detected one; unknown values are ignored.
pub const ISA_ENV: &str = "ARGUS_ISA";

impl Isa {
    /// Every level, lowest first.
    pub const ALL: [Isa; 5] = [Isa::Portable, Isa::Avx2, Isa::Avx512, Isa::Avx512Vnni, Isa::Amx];

    /// The lower-case name accepted in [`ISA_ENV`].
    pub fn name(self) -> &'static str {
        match self {
            Isa::Portable => "portable",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
            Isa::Avx512Vnni => "avx512vnni",
            Isa::Amx => "amx",
        }
    }

    /// Parses a name as written by [`Isa::name`] (case-insensitive, surrounding spaces ignored).
    pub fn from_name(name: &str) -> Option<Isa> {
        let name = name.trim();
        Isa::ALL.into_iter().find(|l| l.name().eq_ignore_ascii_case(name))
    }
}

impl fmt::Display for Isa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The best level the CPU supports, ignoring [`ISA_ENV`]. Probed once.
pub(crate) fn hardware() -> Isa {
    static HARDWARE: OnceLock<Isa> = OnceLock::new();
    *HARDWARE.get_or_init(probe)
}

#[cfg(target_arch = "x86_64")]
fn probe() -> Isa {
    // Checked in order so that a level is reported only when all lower ones also hold.
    if !is_x86_feature_detected!("avx2") {
        return Isa::Portable;
    }
    let avx512 = is_x86_feature_detected!("avx512f")
        && is_x86_feature_detected!("avx512bw")
        && is_x86_feature_detected!("avx512dq")
        && is_x86_feature_detected!("avx512vl");
    if !avx512 {
        return Isa::Avx2;
    }
    if !is_x86_feature_detected!("avx512vnni") {
        return Isa::Avx512;
    }
    if !super::amx::usable() {
        return Isa::Avx512Vnni;
    }
    Isa::Amx
}

#[cfg(not(target_arch = "x86_64"))]
fn probe() -> Isa {
    Isa::Portable
}

/// The level the kernels without `_with` use: the CPU's best, lowered by [`ISA_ENV`] if set.
/// Computed once per process.
pub fn detected() -> Isa {
    static DETECTED: OnceLock<Isa> = OnceLock::new();
    *DETECTED.get_or_init(|| apply_override(std::env::var(ISA_ENV).ok().as_deref(), hardware()))
}

/// The level for an [`ISA_ENV`] value: a valid name lowers `hw`, never raises it; anything
/// else leaves it.
fn apply_override(env: Option<&str>, hw: Isa) -> Isa {
    match env.and_then(Isa::from_name) {
        Some(forced) => forced.min(hw),
        None => hw,
    }
}

/// Every level this CPU can run, lowest first (independent of [`ISA_ENV`]), for tests and benches.
pub fn available() -> Vec<Isa> {
    let hw = hardware();
    Isa::ALL.into_iter().filter(|&l| l <= hw).collect()
}

/// The level a `_with(requested, ..)` call actually runs: the best available one ≤ `requested`.
pub(crate) fn resolve(requested: Isa) -> Isa {
    requested.min(hardware())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for l in Isa::ALL {
            assert_eq!(Isa::from_name(l.name()), Some(l));
            assert_eq!(Isa::from_name(&format!(" {} ", l.name().to_uppercase())), Some(l));
        }
        assert_eq!(Isa::from_name("sse2"), None);
    }

    #[test]
    fn env_override_only_lowers() {
        assert_eq!(apply_override(None, Isa::Avx512), Isa::Avx512);
        assert_eq!(apply_override(Some("portable"), Isa::Avx512), Isa::Portable);
        assert_eq!(apply_override(Some("AVX2"), Isa::Avx512Vnni), Isa::Avx2);
        assert_eq!(apply_override(Some("avx512vnni"), Isa::Avx2), Isa::Avx2);
        assert_eq!(apply_override(Some("amx"), Isa::Avx512), Isa::Avx512);
        assert_eq!(apply_override(Some("sse2"), Isa::Amx), Isa::Amx);
        assert_eq!(apply_override(Some(""), Isa::Avx2), Isa::Avx2);
    }

    #[test]
    fn levels_are_consistent() {
        let avail = available();
        assert_eq!(avail[0], Isa::Portable);
        assert!(avail.windows(2).all(|w| w[0] < w[1]));
        assert!(detected() <= hardware());
        assert_eq!(*avail.last().unwrap_or(&Isa::Portable), hardware());
        for l in Isa::ALL {
            assert!(resolve(l) <= l && resolve(l) <= hardware());
        }
    }
}
