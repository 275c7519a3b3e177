//! Signals: `Signal`, `ctrl_c`, a loop asleep woken by one, and the line
//! echo server stopped by SIGINT.
//!
//! Signals are process-wide and these tests run in parallel, so each
//! raises a signal no other test in this binary raises or listens for:
//! SIGINT (`ctrl_c`), SIGTERM (`terminate`), SIGVTALRM and SIGPROF
//! (`wake`), and SIGUSR1, SIGUSR2, SIGHUP, SIGWINCH, SIGURG, SIGALRM and
//! SIGRTMIN+2 and SIGRTMIN+3 (`recv`), and SIGRTMIN+4 (`wake`, sent to the loop's thread). `line_echo` sends its SIGINT and SIGQUIT to a
//! child process.

mod ctrl_c;
mod line_echo;
mod recv;
mod terminate;
mod wake;
