//! The timer: hyper's timeouts (header reads, HTTP/2 keep-alive pings) on
//! ioloop's timer heap.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use ioloop_runtime::time;

/// [`hyper::rt::Timer`] over [`ioloop::time`](ioloop_runtime::time): each
/// sleep is an `ioloop::time::Sleep` in the loop's timer heap, and
/// [`reset`](hyper::rt::Timer::reset) moves it in place instead of
/// allocating a new one.
///
/// # Examples
///
/// ```
/// use std::time::{Duration, Instant};
/// use hyper::rt::Timer as _;
/// use ioloop::compat::hyper::Timer;
///
/// ioloop::block_on(async {
///     let start = Instant::now();
///     let mut sleep = Timer.sleep(Duration::from_secs(3600));
///     Timer.reset(&mut sleep, Instant::now() + Duration::from_millis(1));
///     sleep.await;
///     assert!(start.elapsed() < Duration::from_secs(3600));
/// });
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Timer;

impl hyper::rt::Timer for Timer {
    /// The loop's clock, so hyper's deadlines follow a paused clock too.
    fn now(&self) -> Instant {
        time::Instant::now().into_std()
    }

    fn sleep(&self, duration: Duration) -> Pin<Box<dyn hyper::rt::Sleep>> {
        Box::pin(Sleep {
            inner: ioloop_runtime::time::sleep(duration),
        })
    }

    fn sleep_until(&self, deadline: Instant) -> Pin<Box<dyn hyper::rt::Sleep>> {
        Box::pin(Sleep {
            inner: ioloop_runtime::time::sleep_until(time::Instant::from_std(deadline)),
        })
    }

    fn reset(&self, sleep: &mut Pin<Box<dyn hyper::rt::Sleep>>, new_deadline: Instant) {
        match sleep.as_mut().downcast_mut_pin::<Sleep>() {
            Some(mine) => mine
                .get_mut()
                .inner
                .reset(time::Instant::from_std(new_deadline)),
            None => *sleep = self.sleep_until(new_deadline),
        }
    }
}

/// [`hyper::rt::Sleep`]: an `ioloop::time::Sleep`, as [`Timer`] hands
/// them to hyper.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ioloop::compat::hyper::Sleep;
///
/// ioloop::block_on(async {
///     Sleep::from(ioloop::time::sleep(Duration::from_millis(1))).await;
/// });
/// ```
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct Sleep {
    inner: ioloop_runtime::time::Sleep,
}

impl Sleep {
    /// The ioloop sleep inside.
    pub fn get_ref(&self) -> &ioloop_runtime::time::Sleep {
        &self.inner
    }

    /// The ioloop sleep inside, mutably (to [`reset`] it, say).
    ///
    /// [`reset`]: ioloop_runtime::time::Sleep::reset
    pub fn get_mut(&mut self) -> &mut ioloop_runtime::time::Sleep {
        &mut self.inner
    }
}

impl From<ioloop_runtime::time::Sleep> for Sleep {
    fn from(inner: ioloop_runtime::time::Sleep) -> Self {
        Sleep { inner }
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        Pin::new(&mut self.get_mut().inner).poll(cx)
    }
}

impl hyper::rt::Sleep for Sleep {}
