//! A call that needs a host component (an executor, a retriever, a runtime adapter): the engine
//! prepares the component's input, the JS layer calls the component, and the engine judges
//! what came back. Nothing a component returns is used before it passes here.

use crate::error::{GraphError, Result};

/// Which host component a pending call waits for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Host {
    Executor,
    /// The built-in lexical executor: the engine answers itself ([`HostCall::run`]).
    Lexical,
    /// The semantic executor: the engine answers ([`HostCall::run`]) or, with a host embedder,
    /// answers once the JS layer embedded the intent ([`HostCall::run_with`]).
    Semantic,
    CapabilityRetriever,
    KnowledgeRetriever,
    /// The runtime adapter of this provider.
    Runtime(String),
}

impl Host {
    pub fn name(&self) -> String {
        match self {
            Host::Executor => "executor".into(),
            Host::Lexical => "lexical".into(),
            Host::Semantic => "semantic".into(),
            Host::CapabilityRetriever => "capabilityRetriever".into(),
            Host::KnowledgeRetriever => "knowledgeRetriever".into(),
            Host::Runtime(p) => format!("runtime:{p}"),
        }
    }
}

/// Where the answer of a call queued on the engine's pool goes.
pub type Done = Box<dyn FnOnce(Result<String>) + Send>;

pub trait HostCall: Send + Sync {
    fn host(&self) -> Host;
    /// The component's input, as JSON.
    fn request(&self) -> &str;
    /// How long the engine waits for the component, if it waits at all.
    fn timeout_ms(&self) -> Option<u64>;
    /// The most characters of JSON the component's answer may print as; the JS walk of the
    /// answer stops past it (see [`crate::json::TOO_MANY_CHARS`]). `None`: walked whole.
    fn output_bound(&self) -> Option<u64> {
        None
    }
    /// The answer of a call the engine serves itself (the lexical executor), off the JS thread.
    fn run(&self) -> Result<String> {
        Err(GraphError::new(crate::error::Code::Internal))
    }
    /// Runs a call the engine serves on its own pool (the semantic executor with the first-party
    /// encoder); `done` gets the answer there, or at once when the call is refused.
    fn run_queued(self: std::sync::Arc<Self>, done: Done) {
        done(Err(GraphError::new(crate::error::Code::Internal)))
    }
    /// The answer of a call the engine serves once the host embedded its text: the vector, or
    /// why the embedder gave none.
    fn run_with(&self, _vector: Result<&[f32]>) -> Result<String> {
        Err(GraphError::new(crate::error::Code::Internal))
    }
    /// Judges the component's answer (JSON) and returns the verb's result.
    fn finish(&self, output: &str) -> Result<String>;
    /// The error for what the component threw (its string `code` and `nextAction`, if any).
    fn fail(&self, code: Option<&str>, next_action: Option<&str>) -> GraphError;
    /// A question the component asks back while it runs (JSON), with what the host's readers
    /// answered so far; `?` + requests while readers are still needed. Only the knowledge
    /// retriever asks (its reads through the engine).
    fn ask(
        &self,
        _question: &str,
        _answers: Option<&str>,
        _bodies: Vec<Option<Vec<u8>>>,
    ) -> Result<String> {
        Err(GraphError::new(crate::error::Code::Internal))
    }
}

/// A verb that answered at once, or one waiting for a host component.
pub enum Started {
    Done(String),
    Ask(Box<dyn HostCall>),
}
