//! The one error type the binary prints: one line on stderr and an exit code.
//! 2 = bad input (nothing ran), 1 = the run failed (records kept), 130 = interrupted.

use std::fmt;

#[derive(Debug)]
pub struct CliError {
    pub code: i32,
    pub message: String,
}

impl CliError {
    /// Bad input: nothing was measured.
    pub fn usage(message: impl Into<String>) -> Self {
        CliError {
            code: 2,
            message: message.into(),
        }
    }
    /// The run went wrong after it started; what was measured is on disk.
    pub fn failed(message: impl Into<String>) -> Self {
        CliError {
            code: 1,
            message: message.into(),
        }
    }
    pub fn interrupted(message: impl Into<String>) -> Self {
        CliError {
            code: 130,
            message: message.into(),
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

pub type CliResult<T> = Result<T, CliError>;
