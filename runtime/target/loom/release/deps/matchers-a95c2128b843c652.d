/work/main/runtime/target/loom/release/deps/matchers-a95c2128b843c652.d: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/matchers-0.2.0/src/lib.rs

/work/main/runtime/target/loom/release/deps/libmatchers-a95c2128b843c652.rlib: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/matchers-0.2.0/src/lib.rs

/work/main/runtime/target/loom/release/deps/libmatchers-a95c2128b843c652.rmeta: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/matchers-0.2.0/src/lib.rs

/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/matchers-0.2.0/src/lib.rs:
