//! Ember's cross-crate tests and benchmark harnesses.
