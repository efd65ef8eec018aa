//! Argus prg layer.
