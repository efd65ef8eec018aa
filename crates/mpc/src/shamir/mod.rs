//! Shamir sharing (3 parties, threshold 1) over prime fields.
