//! 10,000 connect/close cycles leave the process with exactly the file
//! descriptors, and the reactor with exactly the registrations, it had
//! before: nothing leaks on either side of a connection.
//!
//! It runs alone, like every test of this binary (main.rs): it counts the
//! whole process's descriptors, which other tests running in parallel
//! would change.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures_util::{AsyncReadExt, AsyncWriteExt};
use ioloop::net::{TcpListener, TcpStream};
use testkit::{net_proc, net_run, util};

const CYCLES: usize = 10_000;

#[test]
fn ten_thousand_connect_close_cycles_leak_no_descriptor() -> io::Result<()> {
    let _one = crate::one_at_a_time();
    net_run::run(|| async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let fds_before = net_proc::open_fds()?;
        let sources_before = ioloop::Handle::current().metrics().io_sources;

        // The server side: accept, read to end of file, drop; count the
        // drops, and say when the last one is done.
        let closed = Arc::new(AtomicUsize::new(0));
        let all_closed = util::signal();
        let server = {
            let (closed, all_closed) = (closed.clone(), all_closed.clone());
            ioloop::spawn(async move {
                for _ in 0..CYCLES {
                    let (mut stream, _) = listener.accept().await?;
                    let (closed, all_closed) = (closed.clone(), all_closed.clone());
                    let _handler = ioloop::spawn(async move {
                        let mut rest = Vec::new();
                        let read = stream.read_to_end(&mut rest).await;
                        drop(stream);
                        if closed.fetch_add(1, Ordering::SeqCst) + 1 == CYCLES {
                            all_closed.set();
                        }
                        read.map(|_| rest)
                    });
                }
                Ok::<_, io::Error>(listener)
            })
        };

        for i in 0..CYCLES {
            let mut stream = TcpStream::connect(addr).await?;
            if i % 2 == 0 {
                stream.write_all(b"bye").await?;
            }
            drop(stream);
            // On loopback every step above completes without waiting, so
            // without this the loop would never let the accept task run;
            // past the listen backlog the kernel drops SYNs, and each
            // dropped one costs a one-second retransmit.
            ioloop::yield_now().await;
        }
        let listener = server.await.unwrap()?;
        all_closed.wait().await;

        assert_eq!(closed.load(Ordering::SeqCst), CYCLES);
        assert_eq!(net_proc::open_fds()?, fds_before);
        assert_eq!(
            ioloop::Handle::current().metrics().io_sources,
            sources_before
        );
        drop(listener);
        Ok(())
    })
}
