//! The example's two jobs, apart from its `main` so that
//! tests/process/example.rs runs them too.

use std::io;

use ioloop::io::StreamReader;
use ioloop::process::{Command, Stdio};

/// Runs `seq 1 count` and adds up its lines as they come.
pub async fn sum_of_seq(count: u64) -> io::Result<u64> {
    let mut child = Command::new("seq")
        .arg("1")
        .arg(count.to_string())
        .stdout(Stdio::piped())
        .spawn()?;
    let mut lines = StreamReader::new(child.stdout.take().expect("piped"));
    let mut total = 0;
    while let Some(line) = lines.read_line().await? {
        let number = std::str::from_utf8(line)
            .ok()
            .and_then(|text| text.trim().parse::<u64>().ok())
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "seq wrote a non-number"))?;
        total += number;
    }
    let status = child.wait().await?;
    if !status.success() {
        return Err(io::Error::other(format!("seq failed: {status}")));
    }
    Ok(total)
}

/// `seq 1 count | wc -l`: the first child's stdout is the second's stdin.
pub async fn pipeline(count: u64) -> io::Result<String> {
    let mut seq = Command::new("seq")
        .arg("1")
        .arg(count.to_string())
        .stdout(Stdio::piped())
        .spawn()?;
    let pipe = seq.stdout.take().expect("piped").into_stdio()?;
    let wc = Command::new("wc").arg("-l").stdin(pipe).output().await?;
    seq.wait().await?;
    Ok(String::from_utf8_lossy(&wc.stdout).trim().to_string())
}
