//! Agent.
