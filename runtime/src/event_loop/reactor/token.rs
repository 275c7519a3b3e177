//! A slab key and a generation packed into a `mio::Token`: an event can
//! arrive for a freed key's earlier owner (epoll keeps a registration while
//! a duplicate of its fd lives), and the generation lets the reactor drop
//! it.

use mio::Token;

/// Bits of the token that hold the slab key.
const KEY_BITS: u32 = usize::BITS / 2;
const KEY_MASK: usize = (1 << KEY_BITS) - 1;
/// Mask applied to generations so they fit above the key.
pub(crate) const GENERATION_MASK: usize = usize::MAX >> KEY_BITS;

/// The token of mio's waker. No registration can get it: its key bits are
/// all ones, one more than the largest key `pack` accepts.
pub(crate) const WAKER: Token = Token(usize::MAX);

/// Largest slab key a registration may have.
pub(crate) const MAX_KEY: usize = KEY_MASK - 1;

/// Builds the token for `key` in its `generation`.
pub(crate) fn pack(key: usize, generation: usize) -> Token {
    debug_assert!(key <= MAX_KEY);
    Token(((generation & GENERATION_MASK) << KEY_BITS) | key)
}

/// Splits a token into its key and generation.
pub(crate) fn unpack(token: Token) -> (usize, usize) {
    (token.0 & KEY_MASK, token.0 >> KEY_BITS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_never_collides_with_the_waker() {
        for (key, generation) in [
            (0, 0),
            (5, 1),
            (MAX_KEY, GENERATION_MASK),
            (7, GENERATION_MASK + 3),
        ] {
            let token = pack(key, generation);
            assert_ne!(token, WAKER);
            assert_eq!(unpack(token), (key, generation & GENERATION_MASK));
        }
    }
}
