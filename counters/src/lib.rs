//! Counters: the catalogue, GL query pools and serialized timing.
