//! The guide: from the lessons' event loop to ioloop.
//!
//! Docs only: no code lives here. The text is `docs/guide.md`, and the two
//! line echo handlers are included from `examples/`, which CI compiles, so
//! the guide shows code that builds.
#![doc = include_str!("../docs/guide.md")]
#![doc = "```rust,ignore"]
#![doc = include_str!("../examples/line_echo/handler.rs")]
#![doc = "```"]
#![doc = include_str!("../docs/guide_callbacks.md")]
#![doc = "```rust,ignore"]
#![doc = include_str!("../examples/line_echo_callbacks/handler.rs")]
#![doc = "```"]
