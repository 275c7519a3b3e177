//! A tiny `--name value` flag parser shared by the examples (included with
//! `#[path]`), so they need no command-line crate.

// An example's own lookups decide no order the runtime takes: the ban on
// std's maps (clippy.toml) is for the library's code.
#![allow(clippy::disallowed_types)]

use std::collections::HashMap;
use std::str::FromStr;

/// Flags given as `--name value` or `--name=value`.
pub struct Args {
    flags: HashMap<String, String>,
}

impl Args {
    /// Parses the process's arguments; exits with `usage` on `--help` or on
    /// anything that is not a flag with a value.
    pub fn parse(usage: &str) -> Args {
        let mut flags = HashMap::new();
        let mut args = std::env::args().skip(1);
        while let Some(arg) = args.next() {
            if arg == "--help" || arg == "-h" {
                println!("{usage}");
                std::process::exit(0);
            }
            let Some(name) = arg.strip_prefix("--") else {
                fail(usage, &format!("unexpected argument {arg:?}"));
            };
            let (name, value) = match name.split_once('=') {
                Some((n, v)) => (n.to_string(), v.to_string()),
                None => match args.next() {
                    Some(v) => (name.to_string(), v),
                    None => fail(usage, &format!("--{name} needs a value")),
                },
            };
            flags.insert(name, value);
        }
        Args { flags }
    }

    /// The value of `--name`, or `default` if absent; exits on a bad value.
    pub fn get<T: FromStr>(&self, name: &str, default: T) -> T {
        match self.flags.get(name) {
            None => default,
            Some(v) => v.parse().unwrap_or_else(|_| {
                eprintln!("invalid value for --{name}: {v:?}");
                std::process::exit(2)
            }),
        }
    }
}

/// Prints `why` and the usage, and exits with status 2.
pub fn fail(usage: &str, why: &str) -> ! {
    eprintln!("{why}\n\n{usage}");
    std::process::exit(2)
}
