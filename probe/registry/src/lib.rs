//! Khronos registry model.
