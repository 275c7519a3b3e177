//! The two servers of the recipe, shared by `main.rs` and by the tests
//! (tests/net/udp_servers.rs includes this file).

use std::io;
use std::time::{SystemTime, UNIX_EPOCH};

use ioloop::net::UdpSocket;

/// Answers every datagram with the current time, as `time.ctime()` formats
/// it (in UTC).
pub async fn time_server(socket: UdpSocket) -> io::Result<()> {
    let mut buf = [0u8; 1];
    loop {
        let (_, peer) = socket.recv_from(&mut buf).await?;
        socket
            .send_to(ctime_utc(SystemTime::now()).as_bytes(), peer)
            .await?;
    }
}

/// Sends every datagram back to where it came from.
pub async fn echo_server(socket: UdpSocket) -> io::Result<()> {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let (n, peer) = socket.recv_from(&mut buf).await?;
        socket.send_to(&buf[..n], peer).await?;
    }
}

/// `Www Mmm dd hh:mm:ss yyyy` for `t`, in UTC.
pub fn ctime_utc(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    const WEEKDAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{} {} {:2} {:02}:{:02}:{:02} {}",
        WEEKDAYS[days.rem_euclid(7) as usize],
        MONTHS[(month - 1) as usize],
        day,
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        year
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn ctime_matches_a_known_date() {
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_345_917_171);
        assert_eq!(super::ctime_utc(t), "Sat Aug 25 17:52:51 2012");
    }
}
