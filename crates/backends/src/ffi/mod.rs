//! The only code in this crate that needs `unsafe`: thin wrappers, each unsafe block with
//! its SAFETY argument.

#[allow(unsafe_code)]
pub mod fiemap;
#[allow(unsafe_code)]
pub mod mmap;
