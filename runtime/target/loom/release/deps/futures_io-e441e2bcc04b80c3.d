/work/main/runtime/target/loom/release/deps/futures_io-e441e2bcc04b80c3.d: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/futures-io-0.3.34/src/lib.rs

/work/main/runtime/target/loom/release/deps/libfutures_io-e441e2bcc04b80c3.rlib: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/futures-io-0.3.34/src/lib.rs

/work/main/runtime/target/loom/release/deps/libfutures_io-e441e2bcc04b80c3.rmeta: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/futures-io-0.3.34/src/lib.rs

/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/futures-io-0.3.34/src/lib.rs:
