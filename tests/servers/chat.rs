//! examples/chat: every line reaches every client, in the order the room
//! took them; a client that cannot keep up is told how many it missed;
//! an overlong line ends only its sender's session.

#[path = "../../examples/chat/room.rs"]
mod room;

use std::io;
use std::time::Duration;

use ioloop::io::{StreamReader, StreamWriter};
use ioloop::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use ioloop::net::{TcpListener, TcpStream};
use ioloop::time::timeout;

const LIMIT: Duration = Duration::from_secs(30);

struct Guest {
    reader: StreamReader<OwnedReadHalf>,
    writer: StreamWriter<OwnedWriteHalf>,
}

impl Guest {
    async fn join(addr: std::net::SocketAddr) -> io::Result<Guest> {
        let (reader, writer) = TcpStream::connect(addr).await?.into_split();
        let mut reader = StreamReader::new(reader);
        reader.set_max_line_length(1 << 20);
        Ok(Guest {
            reader,
            writer: StreamWriter::new(writer),
        })
    }

    async fn line(&mut self) -> io::Result<String> {
        let line = timeout(LIMIT, self.reader.read_line()).await??;
        Ok(String::from_utf8_lossy(line.expect("the room hung up")).into_owned())
    }

    /// Reads lines until one equals `want`.
    async fn until(&mut self, want: &str) -> io::Result<Vec<String>> {
        let mut seen = Vec::new();
        loop {
            let line = self.line().await?;
            if line == want {
                return Ok(seen);
            }
            seen.push(line);
        }
    }

    async fn say(&mut self, text: &str) -> io::Result<()> {
        self.writer.write(text.as_bytes());
        self.writer.write(b"\n");
        self.writer.drain().await
    }
}

fn serve() -> io::Result<std::net::SocketAddr> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    listener.set_nonblocking(true)?;
    drop(ioloop::spawn(async move {
        let listener = TcpListener::from_std(listener).expect("register");
        room::serve(listener).await
    }));
    Ok(addr)
}

#[test]
fn every_line_reaches_every_guest_in_one_order() -> io::Result<()> {
    ioloop::block_on(async {
        let addr = serve()?;
        let mut guests = Vec::new();
        for i in 1..=3 {
            let mut guest = Guest::join(addr).await?;
            assert_eq!(guest.line().await?, format!("welcome, guest{i}"));
            guest.until(&format!("* guest{i} joined")).await?;
            guests.push(guest);
        }
        for round in 0..50 {
            for (i, guest) in guests.iter_mut().enumerate() {
                guest.say(&format!("round {round} from {}", i + 1)).await?;
            }
        }
        // Each guest hears all 150, in the order the room took them
        // (which interleaves the three guests as their lines arrived).
        let mut heard = Vec::new();
        for guest in &mut guests {
            let mut rounds = Vec::new();
            while rounds.len() < 150 {
                let line = guest.line().await?;
                if line.contains("round") {
                    rounds.push(line);
                }
            }
            heard.push(rounds);
        }
        assert_eq!(heard[0].len(), 150);
        assert!(
            heard.iter().all(|h| h == &heard[0]),
            "guests heard different orders"
        );
        // A guest leaving is announced.
        drop(guests.remove(2));
        guests[0].until("* guest3 left").await?;
        Ok(())
    })
}

#[test]
fn a_guest_that_cannot_keep_up_is_told_how_many_it_missed() -> io::Result<()> {
    ioloop::block_on(async {
        let addr = serve()?;
        let mut talker = Guest::join(addr).await?;
        talker.until("* guest1 joined").await?;
        let mut sleeper = Guest::join(addr).await?;
        sleeper.until("* guest2 joined").await?;
        // The sleeper reads nothing while 8 MB of lines go by: its socket
        // fills, its task waits in `drain`, and the room moves on.
        let text = "x".repeat(room::MAX_LINE - 100);
        let lines = 4000;
        // The talker reads as it comes (it may lag too, in a busy run).
        let reader = ioloop::spawn(async move {
            talker.until("guest3: done").await?;
            Ok::<_, io::Error>(talker)
        });
        let writer = Guest::join(addr).await?;
        let (mut own, mut writer) = (writer.reader, writer.writer);
        // The writer hears its own lines too: read them as they come, or
        // its session would wait on it, as the sleeper's does.
        let echo = ioloop::spawn(async move {
            while let Some(line) = own.read_line().await? {
                if line == b"guest3: done" {
                    break;
                }
            }
            Ok::<_, io::Error>(())
        });
        for _ in 0..lines {
            writer.write(text.as_bytes());
            writer.write(b"\n");
            writer.drain().await?;
        }
        writer.write(b"done\n");
        writer.drain().await?;
        timeout(LIMIT, echo).await?.expect("the writer's reader")?;
        let _talker = reader.await.expect("the talker")?;
        let seen = sleeper.until("guest3: done").await?;
        let missed: u64 = seen
            .iter()
            .filter_map(|l| {
                l.strip_prefix("* you missed ")?
                    .strip_suffix(" messages")?
                    .parse::<u64>()
                    .ok()
            })
            .sum();
        let got = seen.iter().filter(|l| l.starts_with("guest3: x")).count() as u64;
        assert!(missed > 0, "the sleeper never lagged");
        assert_eq!(
            got + missed,
            lines as u64,
            "{got} lines and {missed} missed"
        );
        Ok(())
    })
}

#[test]
fn an_overlong_line_ends_only_its_senders_session() -> io::Result<()> {
    ioloop::block_on(async {
        let addr = serve()?;
        let mut good = Guest::join(addr).await?;
        good.until("* guest1 joined").await?;
        let mut bad = Guest::join(addr).await?;
        bad.until("* guest2 joined").await?;
        bad.say(&"y".repeat(room::MAX_LINE + 1)).await?;
        good.until("* guest2 left").await?;
        // At the limit, a line is taken.
        good.say(&"z".repeat(room::MAX_LINE)).await?;
        let line = good.line().await?;
        assert_eq!(line.len(), "guest1: ".len() + room::MAX_LINE);
        Ok(())
    })
}
