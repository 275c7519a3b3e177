//! The guide: ioloop for readers coming from asyncio, from tokio, or from
//! the lessons' event loop, in chapters.
#![doc = include_str!("../docs/guide/index.md")]

// Docs only: no code lives here. Each chapter is a module whose text is a
// file of `docs/guide/` (`index.md` is this page); the two line echo
// handlers are included from `examples/`, which CI compiles, so the guide
// shows code that builds.

/// A chapter: its text, and the two links whose target needs a feature:
/// `[..][hyper-serve]` and `[..][hyper-compat]` go to `ioloop::compat::hyper`'s
/// items with the `hyper` feature, and to the chapter on hyper without it,
/// so rustdoc checks every link with default features and with all.
macro_rules! chapter {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        pub mod $name {
            // A blank line: a link definition cannot continue a paragraph.
            #![doc = ""]
            #![cfg_attr(feature = "hyper", doc = "[hyper-serve]: crate::compat::hyper::serve")]
            #![cfg_attr(feature = "hyper", doc = "[hyper-compat]: crate::compat::hyper")]
            #![cfg_attr(not(feature = "hyper"), doc = "[hyper-serve]: crate::guide::http")]
            #![cfg_attr(not(feature = "hyper"), doc = "[hyper-compat]: crate::guide::http")]
        }
    };
}

chapter! {
    #[doc = include_str!("../docs/guide/from_asyncio.md")]
    from_asyncio
}

chapter! {
    #[doc = include_str!("../docs/guide/from_tokio.md")]
    from_tokio
}

chapter! {
    #[doc = include_str!("../docs/guide/lessons.md")]
    lessons
}

chapter! {
    #[doc = include_str!("../docs/guide/differences.md")]
    differences
}

chapter! {
    #[doc = include_str!("../docs/guide/echoed_line.md")]
    echoed_line
}

chapter! {
    #[doc = include_str!("../docs/guide/streams.md")]
    streams
}

chapter! {
    #[doc = include_str!("../docs/guide/timers.md")]
    timers
}

chapter! {
    #[doc = include_str!("../docs/guide/signals.md")]
    signals
}

chapter! {
    #[doc = include_str!("../docs/guide/cores.md")]
    cores
}

chapter! {
    #[doc = include_str!("../docs/guide/http.md")]
    http
}

chapter! {
    #[doc = include_str!("../docs/guide/simulation.md")]
    simulation
}

chapter! {
    #[doc = include_str!("../docs/guide/handlers.md")]
    #[doc = "```rust,ignore"]
    #[doc = include_str!("../examples/line_echo/handler.rs")]
    #[doc = "```"]
    #[doc = include_str!("../docs/guide/handlers_callbacks.md")]
    #[doc = "```rust,ignore"]
    #[doc = include_str!("../examples/line_echo_callbacks/handler.rs")]
    #[doc = "```"]
    handlers
}
