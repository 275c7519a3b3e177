/work/main/runtime/target/loom/release/deps/smallvec-f0bcc1d04f84ad71.d: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/smallvec-1.16.6/src/lib.rs

/work/main/runtime/target/loom/release/deps/libsmallvec-f0bcc1d04f84ad71.rlib: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/smallvec-1.16.6/src/lib.rs

/work/main/runtime/target/loom/release/deps/libsmallvec-f0bcc1d04f84ad71.rmeta: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/smallvec-1.16.6/src/lib.rs

/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/smallvec-1.16.6/src/lib.rs:
