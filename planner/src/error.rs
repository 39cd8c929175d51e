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

    /// A report that prints the source line with a caret under the span. Only a window of
    /// the line around the span is shown (a query may be one line of megabytes), so what is
    /// printed, and the renderer's work, stay small whatever the query's length.
    pub fn report(&self, name: &str, src: &str) -> miette::Report {
        let (line, col) = self.line_col(src);
        let (excerpt, span) = Excerpt::around(src, &self.span, line - 1);
        miette::miette!(
            labels = vec![miette::LabeledSpan::at(span, "here")],
            "{name}:{line}:{col}: {}",
            self.message
        )
        .with_source_code(excerpt)
    }
}

/// The part of a query's line an error is shown in: at most [`Excerpt::WIDTH`] bytes before
/// and after the span's start, cut at character boundaries and marked `...` where cut, read by
/// miette with the line's true number.
struct Excerpt {
    text: String,
    /// 0-based number of the source line the excerpt comes from.
    line: usize,
}

impl Excerpt {
    const WIDTH: usize = 60;

    /// The excerpt of `src` around `span` (on 0-based line `line`) and the span within it.
    fn around(src: &str, span: &Span, line: usize) -> (Self, (usize, usize)) {
        let start = floor_char(src, span.start.min(src.len()));
        let line_start = src[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = src[start..].find('\n').map_or(src.len(), |i| start + i);
        let from = floor_char(src, start.saturating_sub(Self::WIDTH).max(line_start));
        let to = floor_char(src, (start + Self::WIDTH).min(line_end));
        let head = if from > line_start { "..." } else { "" };
        let tail = if to < line_end { "..." } else { "" };
        let text = format!("{head}{}{tail}", &src[from..to]);
        let at = head.len() + (start - from);
        let len = span
            .end
            .saturating_sub(span.start)
            .clamp(1, Self::WIDTH)
            .min(text.len().saturating_sub(at).max(1));
        let at = at.min(text.len());
        let len = len.min(text.len() - at);
        (Self { text, line }, (at, len))
    }
}

fn floor_char(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

impl miette::SourceCode for Excerpt {
    fn read_span<'a>(
        &'a self,
        span: &miette::SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn miette::SpanContents<'a> + 'a>, miette::MietteError> {
        let inner = self.text.read_span(span, before, after)?;
        Ok(Box::new(miette::MietteSpanContents::new(
            inner.data(),
            *inner.span(),
            inner.line() + self.line,
            inner.column(),
            inner.line_count(),
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_far_along_a_long_line_shows_a_window_of_it() {
        let src = format!("cql() {} (((", "check ".repeat(20_000));
        let e = ParseError::new("expected a filter", src.len() - 3..src.len() - 2);
        let text = format!("{:?}", e.report("q.cql", &src));
        assert!(text.contains("q.cql:1:120008"), "{text}");
        assert!(text.len() < 2_000, "{} bytes", text.len());
        assert!(text.contains("..."));
    }

    #[test]
    fn a_multibyte_query_cuts_at_characters() {
        let src = format!("cql() {} ◎◎(", "♔♚ ".repeat(100));
        let e = ParseError::new("bad", src.len() - 1..src.len());
        let _ = format!("{:?}", e.report("q.cql", &src));
    }
}
