//! Argus net layer.
