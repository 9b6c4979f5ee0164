//! Shared set-up for the example programs.
