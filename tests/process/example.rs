//! examples/subprocess's two jobs: asyncio's docs example (a command's
//! lines read as they come, its exit awaited) and a pipeline.

#[path = "../../examples/subprocess/children.rs"]
mod children;

use std::io;

use crate::child::run;

#[test]
fn the_example_sums_100000_lines_and_runs_its_pipeline() -> io::Result<()> {
    run(async || {
        assert_eq!(children::sum_of_seq(100_000).await?, 5_000_050_000);
        assert_eq!(children::sum_of_seq(0).await?, 0);
        assert_eq!(children::pipeline(1234).await?, "1234");
        Ok(())
    })
}
