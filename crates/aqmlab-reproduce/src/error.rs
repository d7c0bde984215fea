//! The error every reproduction, and the `aqmlab` command, returns:
//! classified for the exit code.

/// An error, classified for the exit code.
#[derive(Debug)]
pub enum Error {
    /// The user's input is wrong: exit 2.
    Input(String),
    /// Something failed that is not the user's fault: exit 1.
    Internal(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Input(m) => write!(f, "{m}"),
            Error::Internal(m) => write!(f, "internal error: {m}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<aqmlab::ScenarioError> for Error {
    fn from(e: aqmlab::ScenarioError) -> Self {
        Error::Input(e.to_string())
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Internal(e.to_string())
    }
}

/// A result with [`Error`]; `Result` alone is `Result<()>`.
pub type Result<T = ()> = std::result::Result<T, Error>;
