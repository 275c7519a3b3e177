//! The seam a simulation stands in for the OS through
//! (`Builder::build_simulated`, `sim::Backend`): a toy world whose sources
//! register like any mio source and become readable at virtual instants
//! it chooses; the loop moves its paused clock to the world's next
//! delivery, and asks the world when nothing at all is left to do.

use std::future::poll_fn;
use std::io;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Poll, Waker};
use std::time::Duration;

use ioloop::io::Registration;
use ioloop::sim::Seed;
use ioloop::sim::{Backend, Ready};
use ioloop::time::Instant;
use mio::event::Source;
use mio::{Interest, Registry, Token};
use testkit::util::within;

#[derive(Default)]
struct World {
    /// Each source's token, once registered.
    tokens: Vec<Option<Token>>,
    /// Each source has been made readable.
    delivered: Vec<bool>,
    /// (when, source): a source becomes readable then.
    due: Vec<(Duration, usize)>,
    /// The loop said it had nothing left to do.
    stuck: bool,
    on_stuck: Option<Waker>,
}

#[derive(Clone, Default)]
struct Shared(Arc<Mutex<World>>);

impl Shared {
    fn lock(&self) -> MutexGuard<'_, World> {
        self.0.lock().unwrap()
    }
}

struct Toy(Shared);

impl Backend for Toy {
    fn poll(&mut self, now: Duration, events: &mut Vec<(Token, Ready)>) {
        let mut world = self.0.lock();
        let (done, later): (Vec<_>, Vec<_>) = world.due.iter().partition(|(at, _)| *at <= now);
        world.due = later;
        for (_, source) in done {
            world.delivered[source] = true;
            let token = world.tokens[source].expect("registered");
            let readable = Ready {
                readable: true,
                ..Ready::default()
            };
            events.push((token, readable));
        }
    }

    fn next_deadline(&self) -> Option<Duration> {
        self.0.lock().due.iter().map(|(at, _)| *at).min()
    }

    fn stuck(&mut self) {
        let mut world = self.0.lock();
        world.stuck = true;
        if let Some(waker) = world.on_stuck.take() {
            waker.wake();
        }
    }
}

/// A source of the toy world: no fd, its readiness decided by the world.
struct Pipe(Shared, usize);

impl Pipe {
    fn new(world: &Shared, readable_at: Option<Duration>) -> Pipe {
        let mut w = world.lock();
        let id = w.tokens.len();
        w.tokens.push(None);
        w.delivered.push(false);
        if let Some(at) = readable_at {
            w.due.push((at, id));
        }
        Pipe(world.clone(), id)
    }
}

impl Pipe {
    /// A read: `WouldBlock` until the world delivered.
    fn try_read(&self) -> io::Result<()> {
        match self.0.lock().delivered[self.1] {
            true => Ok(()),
            false => Err(io::ErrorKind::WouldBlock.into()),
        }
    }
}

impl Source for Pipe {
    fn register(&mut self, _: &Registry, token: Token, _: Interest) -> io::Result<()> {
        self.0.lock().tokens[self.1] = Some(token);
        Ok(())
    }

    fn reregister(&mut self, registry: &Registry, token: Token, i: Interest) -> io::Result<()> {
        self.register(registry, token, i)
    }

    fn deregister(&mut self, _: &Registry) -> io::Result<()> {
        self.0.lock().tokens[self.1] = None;
        Ok(())
    }
}

#[test]
fn the_clock_moves_to_each_delivery_and_the_waiting_tasks_wake_in_order() {
    within(Duration::from_secs(30), || {
        let world = Shared::default();
        let rt = ioloop::Runtime::builder()
            .seed(5)
            .build_simulated(Toy(world.clone()))
            .unwrap();
        let order = rt.block_on(async {
            let start = Instant::now();
            let order = Arc::new(Mutex::new(Vec::new()));
            let waits: Vec<_> = [5, 2, 9]
                .into_iter()
                .map(|secs| {
                    let pipe = Pipe::new(&world, Some(Duration::from_secs(secs)));
                    let order = order.clone();
                    ioloop::spawn(async move {
                        let registration = Registration::new(pipe).unwrap();
                        registration.read_io(Pipe::try_read).await.unwrap();
                        order.lock().unwrap().push((secs, start.elapsed()));
                    })
                })
                .collect();
            for wait in waits {
                wait.await.unwrap();
            }
            order.lock().unwrap().clone()
        });
        let secs = |s| Duration::from_secs(s);
        assert_eq!(order, [(2, secs(2)), (5, secs(5)), (9, secs(9))]);
    });
}

#[test]
fn a_loop_with_nothing_left_to_do_tells_the_world_instead_of_sleeping_forever() {
    within(Duration::from_secs(30), || {
        let world = Shared::default();
        let rt = ioloop::Runtime::builder()
            .build_simulated(Toy(world.clone()))
            .unwrap();
        let stuck = rt.block_on(async {
            // Waits on a source the world never makes ready, and on a timer
            // that fires first: only after it is the loop out of work.
            let pipe = Pipe::new(&world, None);
            let registration = Registration::new(pipe).unwrap();
            let waiting = ioloop::spawn(async move { registration.read_io(Pipe::try_read).await });
            ioloop::time::sleep(Duration::from_secs(60)).await;
            assert!(!world.lock().stuck, "stuck while a timer was armed");
            poll_fn(|cx| {
                let mut w = world.lock();
                if w.stuck {
                    return Poll::Ready(());
                }
                w.on_stuck = Some(cx.waker().clone());
                Poll::Pending
            })
            .await;
            waiting.abort();
            true
        });
        assert!(stuck);
    });
}
