/work/main/runtime/target/loom/release/deps/ioloop_net-7494e986690e4a59.d: net/src/lib.rs net/src/addr.rs net/src/callbacks/mod.rs net/src/callbacks/buffers.rs net/src/callbacks/connection.rs net/src/callbacks/driver.rs net/src/callbacks/handler.rs net/src/callbacks/server.rs net/src/io/mod.rs net/src/io/framing.rs net/src/io/read_buf.rs net/src/io/reader.rs net/src/io/reader_access.rs net/src/io/reader_io.rs net/src/io/write_buf.rs net/src/io/writer.rs net/src/io/writer_access.rs net/src/io/writer_io.rs net/src/tcp/mod.rs net/src/tcp/accept.rs net/src/tcp/connect.rs net/src/tcp/incoming.rs net/src/tcp/listener.rs net/src/tcp/owned_split.rs net/src/tcp/split.rs net/src/tcp/stream.rs net/src/tcp/stream_io.rs net/src/udp.rs net/src/udp/datagrams.rs

/work/main/runtime/target/loom/release/deps/libioloop_net-7494e986690e4a59.rlib: net/src/lib.rs net/src/addr.rs net/src/callbacks/mod.rs net/src/callbacks/buffers.rs net/src/callbacks/connection.rs net/src/callbacks/driver.rs net/src/callbacks/handler.rs net/src/callbacks/server.rs net/src/io/mod.rs net/src/io/framing.rs net/src/io/read_buf.rs net/src/io/reader.rs net/src/io/reader_access.rs net/src/io/reader_io.rs net/src/io/write_buf.rs net/src/io/writer.rs net/src/io/writer_access.rs net/src/io/writer_io.rs net/src/tcp/mod.rs net/src/tcp/accept.rs net/src/tcp/connect.rs net/src/tcp/incoming.rs net/src/tcp/listener.rs net/src/tcp/owned_split.rs net/src/tcp/split.rs net/src/tcp/stream.rs net/src/tcp/stream_io.rs net/src/udp.rs net/src/udp/datagrams.rs

/work/main/runtime/target/loom/release/deps/libioloop_net-7494e986690e4a59.rmeta: net/src/lib.rs net/src/addr.rs net/src/callbacks/mod.rs net/src/callbacks/buffers.rs net/src/callbacks/connection.rs net/src/callbacks/driver.rs net/src/callbacks/handler.rs net/src/callbacks/server.rs net/src/io/mod.rs net/src/io/framing.rs net/src/io/read_buf.rs net/src/io/reader.rs net/src/io/reader_access.rs net/src/io/reader_io.rs net/src/io/write_buf.rs net/src/io/writer.rs net/src/io/writer_access.rs net/src/io/writer_io.rs net/src/tcp/mod.rs net/src/tcp/accept.rs net/src/tcp/connect.rs net/src/tcp/incoming.rs net/src/tcp/listener.rs net/src/tcp/owned_split.rs net/src/tcp/split.rs net/src/tcp/stream.rs net/src/tcp/stream_io.rs net/src/udp.rs net/src/udp/datagrams.rs

net/src/lib.rs:
net/src/addr.rs:
net/src/callbacks/mod.rs:
net/src/callbacks/buffers.rs:
net/src/callbacks/connection.rs:
net/src/callbacks/driver.rs:
net/src/callbacks/handler.rs:
net/src/callbacks/server.rs:
net/src/io/mod.rs:
net/src/io/framing.rs:
net/src/io/read_buf.rs:
net/src/io/reader.rs:
net/src/io/reader_access.rs:
net/src/io/reader_io.rs:
net/src/io/write_buf.rs:
net/src/io/writer.rs:
net/src/io/writer_access.rs:
net/src/io/writer_io.rs:
net/src/tcp/mod.rs:
net/src/tcp/accept.rs:
net/src/tcp/connect.rs:
net/src/tcp/incoming.rs:
net/src/tcp/listener.rs:
net/src/tcp/owned_split.rs:
net/src/tcp/split.rs:
net/src/tcp/stream.rs:
net/src/tcp/stream_io.rs:
net/src/udp.rs:
net/src/udp/datagrams.rs:
