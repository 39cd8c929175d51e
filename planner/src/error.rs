//! Query errors with the span they point at, rendered with a caret by miette.

use crate::ast::Span;

/// A syntax or type error in a query.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ParseError {
    /// What is wrong.
    pub message: String,
    /// Where (byte range in the source).
    pub span: Span,
}

impl ParseError {
    /// A new error at `span`.
    pub fn new(message: impl Into<String>, span: Span) -> Self {
        Self {
            message: message.into(),
            span,
        }
    }

    /// 1-based line and column of the error's start in `src`.
    pub fn line_col(&self, src: &str) -> (usize, usize) {
        let start = self.span.start.min(src.len());
        let before = &src[..start];
        let line = before.matches('\n').count() + 1;
        let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        (line, col)
    }

    /// A report that prints the source line with a caret under the span.
    pub fn report(&self, name: &str, src: &str) -> miette::Report {
        let (line, col) = self.line_col(src);
        let len = self.span.end.saturating_sub(self.span.start).max(1);
        let span = (
            self.span.start.min(src.len()),
            len.min(src.len().saturating_sub(self.span.start)),
        );
        miette::miette!(
            labels = vec![miette::LabeledSpan::at(span, "here")],
            "{name}:{line}:{col}: {}",
            self.message
        )
        .with_source_code(src.to_owned())
    }
}
