/work/main/runtime/target/loom/release/deps/scoped_tls-fdf7ccf5aed37132.d: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/scoped-tls-1.0.1/src/lib.rs

/work/main/runtime/target/loom/release/deps/libscoped_tls-fdf7ccf5aed37132.rlib: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/scoped-tls-1.0.1/src/lib.rs

/work/main/runtime/target/loom/release/deps/libscoped_tls-fdf7ccf5aed37132.rmeta: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/scoped-tls-1.0.1/src/lib.rs

/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/scoped-tls-1.0.1/src/lib.rs:
