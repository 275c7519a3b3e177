//! The kernel is the reference for the simulation (issue 40). Each
//! scenario is an async fn over ioloop's public API that returns a
//! [`Transcript`] of what it saw: bytes, error kinds and raw OS errors,
//! ends of stream, refusals, the shape of addresses. It runs once on real
//! sockets (127.0.0.1) and in simulated worlds of several seeds (one
//! host, whose 127.0.0.1 is its own address); the transcripts must be
//! equal. A scenario whose difference the simulation does not model on
//! purpose is in [`DIFFERS`], with the guide's row that says so: it must
//! still differ, and the guide must name it.

mod tcp_close;
mod tcp_connect;
mod tcp_data;
mod transcript;
mod udp;
mod unix;

use std::cell::RefCell;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::rc::Rc;
use std::time::Duration;

use ioloop::net::{TcpListener, TcpStream};
use ioloop::sim::Sim;

pub use transcript::{Transcript, pattern, shape};

/// A listener on 127.0.0.1 (the host's own address in a simulation), on
/// a port the system picks.
pub async fn listener() -> io::Result<TcpListener> {
    TcpListener::bind("127.0.0.1:0").await
}

/// A connection to a new listener: (client, server).
pub async fn pair() -> io::Result<(TcpStream, TcpStream)> {
    let listener = listener().await?;
    let client = TcpStream::connect(listener.local_addr()?).await?;
    let (server, _) = listener.accept().await?;
    Ok((client, server))
}

/// A port nobody listens on (nor receives UDP at): one the system just
/// handed out and took back.
pub async fn free_port() -> io::Result<u16> {
    let tcp = listener().await?;
    let port = tcp.local_addr()?.port();
    drop(tcp);
    Ok(port)
}

/// A scenario's future: its transcript, or the error that cut it short.
type Run = Pin<Box<dyn Future<Output = io::Result<Transcript>>>>;

/// A scenario, by name.
pub struct Scenario {
    name: &'static str,
    run: fn() -> Run,
}

/// The table of scenarios: `module::name` for each async fn.
macro_rules! scenarios {
    ($($module:ident :: $name:ident),* $(,)?) => {
        &[$(Scenario {
            name: concat!(stringify!($module), "::", stringify!($name)),
            run: || Box::pin($module::$name()),
        }),*]
    };
}

/// Every TCP scenario.
const TCP: &[Scenario] = scenarios![
    tcp_connect::connect_to_a_listener,
    tcp_connect::connect_to_a_closed_port_is_refused,
    tcp_connect::connect_again_once_the_port_listens,
    tcp_connect::the_backlog_holds_connections_until_accepted_in_order,
    tcp_connect::a_connection_closed_before_accept_is_accepted_with_its_bytes,
    tcp_connect::a_listener_closed_with_connections_waiting_resets_them,
    tcp_connect::bind_to_an_address_in_use,
    tcp_connect::bind_to_an_address_no_interface_has,
    tcp_connect::connect_to_the_unspecified_address,
    tcp_connect::a_listener_on_the_unspecified_address,
    tcp_connect::options_set_and_read_back,
    tcp_connect::a_tcp_socket_built_by_hand,
    tcp_connect::both_ends_name_each_other,
    tcp_connect::fifty_connections_each_from_a_port_of_its_own,
    tcp_data::echo_a_small_payload,
    tcp_data::echo_a_large_payload,
    tcp_data::partial_writes_under_a_full_buffer_lose_nothing,
    tcp_data::many_small_writes_arrive_as_one_stream,
    tcp_data::zero_length_reads_and_writes,
    tcp_data::peek_sees_what_the_next_read_takes,
    tcp_data::read_exact_cut_short_by_the_end,
    tcp_data::the_client_half_closes_first,
    tcp_data::the_server_half_closes_first,
    tcp_data::the_end_of_stream_reads_zero_again_and_again,
    tcp_data::shutdown_twice,
    tcp_data::shutdown_read_then_read,
    tcp_data::shutdown_both_then_read_and_write,
    tcp_data::shutdown_after_both_ends_closed,
    tcp_data::vectored_writes_of_1_to_2000_slices_arrive_in_order,
    tcp_data::reads_of_one_byte_and_of_a_megabyte_take_the_stream_whole,
    tcp_data::a_vectored_read_skips_empty_buffers,
    tcp_close::close_with_unread_bytes_resets_a_waiting_reader,
    tcp_close::close_with_unread_bytes_resets_the_writer,
    tcp_close::bytes_sent_before_a_reset_are_read_first,
    tcp_close::write_after_the_peer_closed,
    tcp_close::a_writer_blocked_on_a_full_buffer_sees_the_reset,
    tcp_close::a_close_with_queued_bytes_still_delivers_them,
    tcp_close::dropping_the_write_half_ends_the_stream,
];

/// Every UDP scenario.
const UDP: &[Scenario] = scenarios![
    udp::datagrams_of_0_1_1472_and_65507_bytes,
    udp::a_65508_byte_datagram_is_too_long,
    udp::send_on_an_unconnected_socket,
    udp::connect_then_send_and_recv,
    udp::a_connected_socket_takes_only_its_peers_datagrams,
    udp::connected_to_a_port_with_no_one,
    udp::a_refusal_is_reported_to_the_next_send,
    udp::an_unconnected_sender_ignores_refusals,
    udp::recv_into_a_smaller_buffer_truncates,
    udp::recv_into_an_empty_buffer_takes_the_datagram,
    udp::peek_from_leaves_the_datagram,
    udp::datagrams_arrive_in_order,
    udp::bind_to_an_address_in_use,
    udp::bind_to_an_address_no_interface_has,
    udp::a_burst_to_an_idle_socket_keeps_the_first,
    udp::send_to_an_address_from_a_connected_socket,
    udp::connect_to_another_peer,
    udp::a_socket_bound_to_the_unspecified_address,
    udp::send_to_port_0,
    udp::recv_on_an_unconnected_socket_takes_from_anyone,
];

/// Every Unix stream scenario.
const UNIX: &[Scenario] = scenarios![
    unix::both_ends_and_the_listener_name_what_the_kernel_names,
    unix::connect_to_a_path_with_no_socket,
    unix::bind_to_a_path_in_use,
    unix::two_paths_name_two_listeners,
    unix::bind_and_connect_the_empty_path,
    unix::a_closed_listeners_path_removed_is_free_again,
    unix::a_closed_listeners_path_left_refuses,
    unix::connections_wait_in_the_backlog_and_are_accepted_in_order,
    unix::echo_a_megabyte_both_ways,
    unix::peek_then_read_and_zero_length_calls,
    unix::the_client_half_closes_and_the_server_answers,
    unix::write_after_the_peer_closed,
    unix::close_with_unread_bytes,
    unix::a_unix_datagram_socket,
];

/// Scenarios the simulation answers differently on purpose, and why: each
/// is a row of the guide's "What a simulation does not cover", which names
/// the scenario.
const DIFFERS: &[(&str, &str)] = &[
    (
        "tcp_connect::options_set_and_read_back",
        "a simulated socket's options are accepted and kept nowhere",
    ),
    (
        "tcp_connect::a_tcp_socket_built_by_hand",
        "TcpSocket is refused inside a simulation",
    ),
    (
        "unix::a_closed_listeners_path_left_refuses",
        "a simulation has no file system: a closed listener's path is free",
    ),
    (
        "unix::a_unix_datagram_socket",
        "a Unix datagram socket is refused inside a simulation",
    ),
];

/// The heading of the guide's section that lists what is not simulated.
const NOT_COVERED: &str = "What a simulation does not cover";

/// How many seeds each scenario runs in the simulation: a 25th of
/// `IOLOOP_SIM_SEEDS` (40 in CI), at least 8.
fn sim_seeds() -> u64 {
    (crate::seeds() / 25).max(8)
}

/// Runs `scenario` on real sockets, on a runtime of its own, with a
/// watchdog that is never what it measures.
fn on_the_kernel(scenario: &Scenario) -> Transcript {
    let rt = ioloop::Builder::new()
        .slow_poll_threshold(None)
        .build()
        .expect("a runtime for the kernel's run");
    let run = (scenario.run)();
    rt.block_on(async move {
        match ioloop::time::timeout(Duration::from_secs(30), run).await {
            Ok(outcome) => Transcript::ended(outcome),
            Err(_) => Transcript::failed("the watchdog: 30 s passed"),
        }
    })
}

/// Runs `scenario` as the one client of a simulated world of `seed`.
fn in_the_simulation(scenario: &Scenario, seed: u64) -> Transcript {
    let seen = Rc::new(RefCell::new(None));
    let slot = seen.clone();
    let run = scenario.run;
    // The loopback is the reference: it takes all a send has room for and
    // answers no `WouldBlock` with bytes queued. The rare paths, which a
    // kernel may take but the loopback does not, run in every other world.
    let outcome = Sim::new(seed)
        .rare_paths(false)
        .deadline(Duration::from_secs(300))
        .client("host", move || async move {
            *slot.borrow_mut() = Some(Transcript::ended(run().await));
            Ok(())
        })
        .run();
    let transcript = seen.borrow_mut().take();
    match (outcome, transcript) {
        (Ok(_), Some(transcript)) => transcript,
        (Ok(_), None) => Transcript::failed("the simulation ended without a transcript"),
        (Err(failure), _) => {
            Transcript::failed(&format!("the simulation failed: {}", failure.what))
        }
    }
}

/// Runs each scenario both ways; panics listing every one whose
/// simulated transcript is not the kernel's (or, for those in
/// [`DIFFERS`], is).
fn compare(scenarios: &[Scenario]) {
    let mut wrong = Vec::new();
    for scenario in scenarios {
        let kernel = on_the_kernel(scenario);
        let differs = DIFFERS.iter().find(|(name, _)| *name == scenario.name);
        for seed in 0..sim_seeds() {
            let sim = in_the_simulation(scenario, seed);
            match differs {
                None if sim != kernel => {
                    wrong.push(format!(
                        "{} (seed {seed}):\n{}",
                        scenario.name,
                        kernel.diff(&sim)
                    ));
                    break;
                }
                Some((name, why)) if sim == kernel => {
                    wrong.push(format!(
                        "{name} (seed {seed}) is listed as differing ({why}), but the \
                         simulation now agrees with the kernel: take it off DIFFERS and \
                         the guide's table"
                    ));
                    break;
                }
                _ => {}
            }
        }
    }
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n\n"));
}

#[test]
fn tcp_in_the_simulation_behaves_as_on_the_kernel() {
    compare(TCP);
}

#[test]
fn udp_in_the_simulation_behaves_as_on_the_kernel() {
    compare(UDP);
}

#[test]
fn unix_streams_in_the_simulation_behave_as_on_the_kernel() {
    compare(UNIX);
}

#[test]
fn there_are_at_least_40_scenarios_and_every_name_is_unique() {
    let mut names: Vec<_> = TCP.iter().chain(UDP).chain(UNIX).map(|s| s.name).collect();
    assert!(names.len() >= 40, "{} scenarios", names.len());
    names.sort_unstable();
    let count = names.len();
    names.dedup();
    assert_eq!(names.len(), count, "a scenario is listed twice");
    for (name, _) in DIFFERS {
        assert!(names.contains(name), "DIFFERS names {name}, no scenario");
    }
    // The count RELIABILITY.md quotes is this table's.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let reliability = std::fs::read_to_string(root.join("RELIABILITY.md")).unwrap();
    let claim = format!("`sim/kernel/` ({count} scenarios");
    assert!(
        reliability.contains(&claim),
        "RELIABILITY.md should say {claim:?}: the table has {count}"
    );
}

/// Every scenario the simulation answers differently is named in the
/// guide's section on what a simulation does not cover, wherever the
/// guide's chapters live (a Markdown file, or a Rust file's doc comments,
/// under the repository's `docs/` or a crate's `src/`).
#[test]
fn every_difference_is_named_in_the_guide() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for dir in ["docs", "src", "runtime/src", "net/src"] {
        chapters_under(&root.join(dir), &mut files);
    }
    let section = files
        .iter()
        .filter_map(|path| std::fs::read_to_string(path).ok())
        .find_map(|text| section(&text, NOT_COVERED))
        .unwrap_or_else(|| panic!("no guide chapter has the section {NOT_COVERED:?}"));
    for (name, why) in DIFFERS {
        assert!(
            section.contains(&format!("`{name}`")),
            "the guide's {NOT_COVERED:?} does not name `{name}` ({why})"
        );
    }
}

/// The lines of `text` under the heading `title`, up to the next heading
/// (a line starting with `#`, once a `//!` or `///` is taken off).
fn section(text: &str, title: &str) -> Option<String> {
    let strip = |line: &str| {
        let line = line.trim_start();
        let line = line
            .strip_prefix("//!")
            .or_else(|| line.strip_prefix("///"))
            .unwrap_or(line);
        line.trim_start().to_owned()
    };
    let mut lines = text.lines().map(strip);
    lines.find(|line| line.starts_with('#') && line.contains(title))?;
    let body: Vec<String> = lines.take_while(|line| !line.starts_with('#')).collect();
    Some(body.join("\n"))
}

/// The Markdown and Rust files under `dir`, recursively (none if it is
/// missing).
fn chapters_under(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            chapters_under(&path, out);
        } else if path
            .extension()
            .is_some_and(|ext| ext == "md" || ext == "rs")
        {
            out.push(path);
        }
    }
}
