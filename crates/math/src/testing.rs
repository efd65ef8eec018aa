//! Test helpers shared by the crate's test modules.

use rand_core::RngCore;

/// A byte stream whose output does not depend on how it is requested (as the PRG's).
pub(crate) struct Counter(pub(crate) u64);

impl RngCore for Counter {
    fn next_u32(&mut self) -> u32 {
        self.next_u64() as u32
    }
    fn next_u64(&mut self) -> u64 {
        let mut b = [0u8; 8];
        self.fill_bytes(&mut b);
        u64::from_le_bytes(b)
    }
    fn fill_bytes(&mut self, dest: &mut [u8]) {
        for d in dest {
            self.0 += 1;
            *d = (self.0.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 56) as u8;
        }
    }
    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand_core::Error> {
        self.fill_bytes(dest);
        Ok(())
    }
}
