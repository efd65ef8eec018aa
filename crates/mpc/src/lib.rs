//! Argus mpc layer.
