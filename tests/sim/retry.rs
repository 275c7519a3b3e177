//! What the `kv` and `hyper` clients share: random values, exact checks,
//! and riding out a broken connection by making it again and retrying.

use std::cell::RefCell;
use std::io;
use std::rc::Rc;
use std::time::Duration;

use ioloop::sim::{Faults, Rng, Sim, run_seeds};
use ioloop::time::timeout;

/// How long, in virtual time, a step (its connect included) may take. The
/// network loses no TCP segment, SYN or RST (a cut holds them until it
/// heals), and the harness's cuts all heal within 3.6 s of the start (six
/// rounds of at most 200 ms apart and 400 ms out): a step silent this long
/// is a hang, and fails the run rather than be retried.
const PATIENCE: Duration = Duration::from_secs(10);
/// The most times a client reconnects before it gives up.
const RECONNECTS: u32 = 100;

/// What clients saw, summed over the clients (and runs) it is added to.
#[derive(Debug, Default)]
pub struct Seen {
    /// Connections lost (reset or closed) and made again.
    pub reconnects: u32,
}

impl Seen {
    /// Adds `other`'s counts to these.
    pub fn add(&mut self, other: &Seen) {
        self.reconnects += other.reconnects;
    }
}

/// A value of random bytes: mostly small, one in four larger than a
/// segment (up to 20 KB, so many segments and reads), and one in a
/// hundred larger than a socket's buffers (64 KiB), so writers wait for
/// room.
pub fn value(rng: &mut Rng) -> Vec<u8> {
    let len = match rng.below(100) {
        0 => rng.range(64 * 1024..128 * 1024),
        1..25 => rng.range(1_460..20_000),
        _ => rng.below(200),
    };
    let mut value: Vec<u8> = (0..len.div_ceil(8))
        .flat_map(|_| rng.next_u64().to_le_bytes())
        .collect();
    value.truncate(len as usize);
    value
}

/// Checks `got` is `want`: a difference is a lost, duplicated or
/// reordered byte, an `InvalidData` error that fails the client.
pub fn check(what: &str, got: &[u8], want: &[u8]) -> io::Result<()> {
    if got == want {
        return Ok(());
    }
    let at = got.iter().zip(want).position(|(a, b)| a != b);
    Err(io::Error::new(
        io::ErrorKind::InvalidData,
        format!(
            "{what}: got {} bytes, want {}, first difference at {at:?} (got {:?})",
            got.len(),
            want.len(),
            String::from_utf8_lossy(&got[..got.len().min(40)]),
        ),
    ))
}

/// Runs `step` on the connection in `conn` (it makes one when there is
/// none) until it succeeds. An error drops the connection and runs `step`
/// again after a pause, telling it it is a retry; a failed [`check`]
/// (`InvalidData`) or a step silent past [`PATIENCE`] fails at once.
pub async fn until_done<C>(
    what: &str,
    conn: &mut Option<C>,
    seen: &mut Seen,
    rng: &mut Rng,
    mut step: impl AsyncFnMut(&mut Option<C>, bool) -> io::Result<()>,
) -> io::Result<()> {
    let mut retried = false;
    loop {
        let err = match timeout(PATIENCE, step(conn, retried)).await {
            Ok(Ok(())) => return Ok(()),
            Ok(Err(err)) if err.kind() == io::ErrorKind::InvalidData => {
                return Err(io::Error::new(err.kind(), format!("{what}: {err}")));
            }
            Ok(Err(err)) => err,
            Err(_) => {
                let msg = format!("{what}: silent for {PATIENCE:?}, a hang");
                return Err(io::Error::new(io::ErrorKind::TimedOut, msg));
            }
        };
        log::debug!("{what}: {err}; reconnecting");
        *conn = None;
        retried = true;
        seen.reconnects += 1;
        if seen.reconnects > RECONNECTS {
            return Err(io::Error::other(format!(
                "{what}: gave up after {RECONNECTS} reconnects"
            )));
        }
        ioloop::time::sleep(Duration::from_millis(rng.range(1..200))).await;
    }
}

/// A world of one server and its clients for a seed, the faults to inject,
/// and where the clients add what they saw.
pub type World = fn(u64, Faults, Rc<RefCell<Seen>>) -> Sim;

/// Runs `world` over 50 seeds with no fault: every run passes, and no
/// client ever made a connection again.
pub fn exact_without_faults(world: World) {
    let seen = Rc::new(RefCell::new(Seen::default()));
    run_seeds(0..50, |seed| world(seed, Faults::default(), seen.clone()))
        .unwrap_or_else(|failure| panic!("{failure}"));
    let reconnects = seen.borrow().reconnects;
    assert_eq!(reconnects, 0, "a connection broke with no fault injected");
}

/// Runs `world` over [`seeds`](crate::seeds) seeds with every fault on:
/// every run passes, and the faults were felt (some connection broke).
pub fn exact_under_faults(name: &str, world: World) {
    let seen = Rc::new(RefCell::new(Seen::default()));
    let runs = run_seeds(0..crate::seeds(), |seed| {
        world(seed, Faults::all(), seen.clone())
    })
    .unwrap_or_else(|failure| panic!("{failure}"));
    eprintln!("{name}: {runs} runs, {:?}", seen.borrow());
    if runs > 20 {
        let reconnects = seen.borrow().reconnects;
        assert!(reconnects > 0, "no fault broke anything in {runs} runs");
    }
}
