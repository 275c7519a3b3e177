/work/main/runtime/target/loom/release/deps/ioloop_runtime-79f3b85b6929aaea.d: runtime/src/lib.rs runtime/src/blocking.rs runtime/src/core.rs runtime/src/handle.rs runtime/src/metrics.rs runtime/src/reactor/mod.rs runtime/src/reactor/driver.rs runtime/src/reactor/readiness.rs runtime/src/reactor/registration.rs runtime/src/reactor/registration/loom_model.rs runtime/src/reactor/token.rs runtime/src/runtime.rs runtime/src/shared.rs runtime/src/shared/loom_model.rs runtime/src/signal/mod.rs runtime/src/signal/ctrl_c.rs runtime/src/signal/kind.rs runtime/src/signal/listener.rs runtime/src/sync/mod.rs runtime/src/sync/harness.rs runtime/src/sync/mock.rs runtime/src/task/mod.rs runtime/src/task/budget.rs runtime/src/task/cell.rs runtime/src/task/cell/loom_model.rs runtime/src/task/join.rs runtime/src/task/yield_now.rs runtime/src/time/mod.rs runtime/src/time/error.rs runtime/src/time/interval.rs runtime/src/time/sleep.rs runtime/src/time/timeout.rs runtime/src/time/timers.rs runtime/src/wake.rs

/work/main/runtime/target/loom/release/deps/ioloop_runtime-79f3b85b6929aaea: runtime/src/lib.rs runtime/src/blocking.rs runtime/src/core.rs runtime/src/handle.rs runtime/src/metrics.rs runtime/src/reactor/mod.rs runtime/src/reactor/driver.rs runtime/src/reactor/readiness.rs runtime/src/reactor/registration.rs runtime/src/reactor/registration/loom_model.rs runtime/src/reactor/token.rs runtime/src/runtime.rs runtime/src/shared.rs runtime/src/shared/loom_model.rs runtime/src/signal/mod.rs runtime/src/signal/ctrl_c.rs runtime/src/signal/kind.rs runtime/src/signal/listener.rs runtime/src/sync/mod.rs runtime/src/sync/harness.rs runtime/src/sync/mock.rs runtime/src/task/mod.rs runtime/src/task/budget.rs runtime/src/task/cell.rs runtime/src/task/cell/loom_model.rs runtime/src/task/join.rs runtime/src/task/yield_now.rs runtime/src/time/mod.rs runtime/src/time/error.rs runtime/src/time/interval.rs runtime/src/time/sleep.rs runtime/src/time/timeout.rs runtime/src/time/timers.rs runtime/src/wake.rs

runtime/src/lib.rs:
runtime/src/blocking.rs:
runtime/src/core.rs:
runtime/src/handle.rs:
runtime/src/metrics.rs:
runtime/src/reactor/mod.rs:
runtime/src/reactor/driver.rs:
runtime/src/reactor/readiness.rs:
runtime/src/reactor/registration.rs:
runtime/src/reactor/registration/loom_model.rs:
runtime/src/reactor/token.rs:
runtime/src/runtime.rs:
runtime/src/shared.rs:
runtime/src/shared/loom_model.rs:
runtime/src/signal/mod.rs:
runtime/src/signal/ctrl_c.rs:
runtime/src/signal/kind.rs:
runtime/src/signal/listener.rs:
runtime/src/sync/mod.rs:
runtime/src/sync/harness.rs:
runtime/src/sync/mock.rs:
runtime/src/task/mod.rs:
runtime/src/task/budget.rs:
runtime/src/task/cell.rs:
runtime/src/task/cell/loom_model.rs:
runtime/src/task/join.rs:
runtime/src/task/yield_now.rs:
runtime/src/time/mod.rs:
runtime/src/time/error.rs:
runtime/src/time/interval.rs:
runtime/src/time/sleep.rs:
runtime/src/time/timeout.rs:
runtime/src/time/timers.rs:
runtime/src/wake.rs:
