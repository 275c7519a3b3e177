//! What every layer shares, below the event loop: the types the loop
//! writes and the layers above read, each a leaf that imports nothing of
//! the crate (`JoinError`, the metrics' counters, the budget's state, the
//! watch of the poll running).

pub(crate) mod budget;
pub(crate) mod counters;
pub(crate) mod join_error;
pub(crate) mod watch;
