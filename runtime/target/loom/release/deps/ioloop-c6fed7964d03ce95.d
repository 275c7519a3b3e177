/work/main/runtime/target/loom/release/deps/ioloop-c6fed7964d03ce95.d: src/lib.rs src/guide.rs src/../docs/guide.md src/../examples/line_echo/handler.rs src/../docs/guide_callbacks.md src/../examples/line_echo_callbacks/handler.rs

/work/main/runtime/target/loom/release/deps/libioloop-c6fed7964d03ce95.rlib: src/lib.rs src/guide.rs src/../docs/guide.md src/../examples/line_echo/handler.rs src/../docs/guide_callbacks.md src/../examples/line_echo_callbacks/handler.rs

/work/main/runtime/target/loom/release/deps/libioloop-c6fed7964d03ce95.rmeta: src/lib.rs src/guide.rs src/../docs/guide.md src/../examples/line_echo/handler.rs src/../docs/guide_callbacks.md src/../examples/line_echo_callbacks/handler.rs

src/lib.rs:
src/guide.rs:
src/../docs/guide.md:
src/../examples/line_echo/handler.rs:
src/../docs/guide_callbacks.md:
src/../examples/line_echo_callbacks/handler.rs:
