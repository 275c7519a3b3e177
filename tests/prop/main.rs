//! Property tests (proptest) of the stream framing and writing: random
//! byte streams, chunkings and partial writes, shrunk to a minimal failing
//! case. `PROPTEST_CASES` sets the number of cases.

mod config;
mod drive;
mod framing;
mod plans;
mod streams;
mod writer;
