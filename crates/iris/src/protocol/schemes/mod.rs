//! The iris schemes, one folder each.

pub mod f16;
pub mod gr16;
pub mod plain_mask;
pub mod rep3;

pub use f16::MpcLiftF16;
pub use gr16::MpcLiftGr16;
pub use plain_mask::PlainMaskZ16;
pub use rep3::{MpcLiftZ16, NoLiftZ32};
