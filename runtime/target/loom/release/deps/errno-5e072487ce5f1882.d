/work/main/runtime/target/loom/release/deps/errno-5e072487ce5f1882.d: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/errno-0.3.15/src/lib.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/errno-0.3.15/src/unix.rs

/work/main/runtime/target/loom/release/deps/liberrno-5e072487ce5f1882.rlib: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/errno-0.3.15/src/lib.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/errno-0.3.15/src/unix.rs

/work/main/runtime/target/loom/release/deps/liberrno-5e072487ce5f1882.rmeta: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/errno-0.3.15/src/lib.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/errno-0.3.15/src/unix.rs

/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/errno-0.3.15/src/lib.rs:
/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/errno-0.3.15/src/unix.rs:
