//! The load generator's flags.
//!
//! Not `examples/common/args.rs`: that parser takes only `--name value`
//! pairs, and the harness passes `--json` bare.

use std::net::SocketAddr;
use std::str::FromStr;
use std::time::Duration;

use crate::protocol::Protocol;

const USAGE: &str = "usage: loadgen [--addr 127.0.0.1:9100] [--connections 100] [--size 64] \
                     [--duration 5] [--warmup 1] [--depth 1] [--protocol line|raw] [--json]";

/// What to run, parsed from the command line.
#[derive(Debug, Clone)]
pub struct Options {
    pub addr: SocketAddr,
    pub connections: usize,
    /// Bytes per message, the `\n` of the line protocol included.
    pub size: usize,
    pub duration: Duration,
    pub warmup: Duration,
    /// Messages in flight per connection.
    pub depth: usize,
    pub protocol: Protocol,
    pub json: bool,
}

impl Options {
    /// Parses the process's arguments; exits with status 2 and the usage on
    /// anything it cannot use.
    pub fn parse() -> Options {
        let mut opts = Options {
            addr: SocketAddr::from(([127, 0, 0, 1], 9100)),
            connections: 100,
            size: 64,
            duration: Duration::from_secs(5),
            warmup: Duration::from_secs(1),
            depth: 1,
            protocol: Protocol::Line,
            json: false,
        };
        let mut args = std::env::args().skip(1);
        while let Some(arg) = args.next() {
            let Some(flag) = arg.strip_prefix("--") else {
                fail(&format!("unexpected argument {arg:?}"));
            };
            let (name, inline) = match flag.split_once('=') {
                Some((name, value)) => (name, Some(value.to_string())),
                None => (flag, None),
            };
            match name {
                "help" => {
                    println!("{USAGE}");
                    std::process::exit(0);
                }
                "json" if inline.is_none() => {
                    opts.json = true;
                    continue;
                }
                _ => {}
            }
            let value = inline
                .or_else(|| args.next())
                .unwrap_or_else(|| fail(&format!("--{name} needs a value")));
            match name {
                "addr" => opts.addr = parse(name, &value),
                "connections" => opts.connections = parse(name, &value),
                "size" => opts.size = parse(name, &value),
                "duration" => opts.duration = seconds(name, &value),
                "warmup" => opts.warmup = seconds(name, &value),
                "depth" => opts.depth = parse(name, &value),
                "protocol" => opts.protocol = parse(name, &value),
                "json" => opts.json = parse(name, &value),
                _ => fail(&format!("unknown flag --{name}")),
            }
        }
        if opts.connections == 0 || opts.size == 0 || opts.depth == 0 {
            fail("--connections, --size and --depth must be at least 1");
        }
        if opts.duration.is_zero() {
            fail("--duration must be more than 0");
        }
        opts
    }
}

fn parse<T: FromStr>(name: &str, value: &str) -> T {
    value
        .parse()
        .unwrap_or_else(|_| fail(&format!("invalid value for --{name}: {value:?}")))
}

fn seconds(name: &str, value: &str) -> Duration {
    let secs: f64 = parse(name, value);
    Duration::try_from_secs_f64(secs).unwrap_or_else(|_| {
        fail(&format!(
            "--{name} must be a number of seconds, not {value:?}"
        ))
    })
}

fn fail(why: &str) -> ! {
    eprintln!("{why}\n\n{USAGE}");
    std::process::exit(2)
}
