//! `sharebench iozone ARGS...`: IOzone's command line, tables and workbook on top of the
//! sharebench engine. (Being built.)

use crate::error::{CliError, CliResult};

/// Runs an IOzone-style invocation; `args` excludes the program and subcommand names.
pub fn main(_args: &[String]) -> CliResult<()> {
    Err(CliError::usage("iozone mode is not built yet"))
}
