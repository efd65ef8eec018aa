//! Vector kernels (filled in by the kernel work).
