//! Processes the harness runs: servers pinned to one core, clients pinned
//! to the other, and what /proc says about them.

use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The core servers run on; clients run on the other.
pub const SERVER_CORE: &str = "0";
pub const CLIENT_CORE: &str = "1";

/// Where the release examples live: next to this binary.
pub fn examples_dir() -> PathBuf {
    std::env::current_exe()
        .expect("current_exe")
        .parent()
        .expect("examples dir")
        .to_path_buf()
}

/// A port nobody listens on right now (the OS picks it; we let it go).
pub fn free_port() -> io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// `program args...` pinned to `core` with taskset.
pub fn pinned(core: &str, program: &Path, args: &[String]) -> Command {
    let mut cmd = Command::new("taskset");
    cmd.arg("-c").arg(core).arg(program).args(args);
    cmd
}

/// A server process, killed when dropped.
pub struct Server {
    child: Child,
    pub addr: SocketAddr,
    pub name: String,
}

impl Server {
    /// Starts example `example` with `args` plus `--port P` on the server
    /// core, and waits until it accepts connections.
    pub fn start(example: &str, args: &[&str]) -> io::Result<Server> {
        let port = free_port()?;
        let mut all: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        all.extend(["--port".to_string(), port.to_string()]);
        let child = pinned(SERVER_CORE, &examples_dir().join(example), &all)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        let addr: SocketAddr = ([127, 0, 0, 1], port).into();
        let mut server = Server {
            child,
            addr,
            name: format!("{example} {}", args.join(" ")),
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(addr).is_err() {
            if let Some(status) = server.child.try_wait()? {
                return Err(io::Error::other(format!(
                    "{} exited: {status}",
                    server.name
                )));
            }
            if Instant::now() > deadline {
                return Err(io::Error::other(format!("{} never listened", server.name)));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(server)
    }

    /// The server's pid (taskset execs the program, so it is the same).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// CPU time the server has used so far, all threads (10 ms ticks).
    pub fn cpu(&self) -> io::Result<Duration> {
        cpu_of(self.pid())
    }

    /// Resident memory right now, in KiB.
    pub fn rss_kb(&self) -> io::Result<u64> {
        status_field(self.pid(), "VmRSS:")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill(); // already gone is fine
        let _ = self.child.wait();
    }
}

/// User + system CPU time of `pid`, from /proc/PID/stat.
pub fn cpu_of(pid: u32) -> io::Result<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    let after = &stat[stat
        .rfind(')')
        .ok_or_else(|| io::Error::other("bad stat"))?
        + 2..];
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks: u64 = f[11].parse::<u64>().map_err(io::Error::other)?
        + f[12].parse::<u64>().map_err(io::Error::other)?;
    Ok(Duration::from_millis(ticks * 10)) // USER_HZ is 100 on Linux
}

/// A `kB` field of /proc/PID/status.
pub fn status_field(pid: u32, field: &str) -> io::Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    status
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| io::Error::other(format!("no {field} for {pid}")))
}

/// Runs a client to completion on the client core and returns its stdout;
/// fails with its stderr if it fails.
pub fn run_client(program: &Path, args: &[String]) -> io::Result<String> {
    let out = pinned(CLIENT_CORE, program, args).output()?;
    if !out.status.success() {
        return Err(io::Error::other(format!(
            "{} failed ({}): {}",
            program.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Whether `tool` is on the PATH.
pub fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Makes sure `tool` is installed, with apt-get if it is missing; returns
/// whether it is available now.
pub fn ensure_tool(tool: &str, package: &str) -> bool {
    if have(tool) {
        return true;
    }
    eprintln!("  {tool} is missing; installing {package} with apt-get ...");
    let installed = Command::new("sh")
        .args([
            "-c",
            &format!("(apt-get install -y {package} || (apt-get update && apt-get install -y {package})) >/dev/null 2>&1"),
        ])
        .status()
        .is_ok_and(|s| s.success());
    if !installed {
        eprintln!("  could not install {package}; its workloads are skipped");
    }
    installed && have(tool)
}

/// Raises this process's open-file limit to its hard limit, so it (and
/// the servers it starts, which inherit it) can hold many connections.
pub fn raise_fd_limit() -> u64 {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `lim` is a valid, writable rlimit for the duration of the call.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return 1024;
    }
    lim.rlim_cur = lim.rlim_max;
    // SAFETY: raising the soft limit to the hard limit needs no privilege;
    // `lim` is a valid rlimit.
    unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) };
    lim.rlim_cur
}
