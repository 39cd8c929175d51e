//! The process's peak resident memory, which every benchmark reports.

/// Peak resident set size in MiB (`VmHWM`), where the system reports it.
pub(super) fn peak_rss_mib() -> Option<f64> {
    status_mib(
        &std::fs::read_to_string("/proc/self/status").ok()?,
        "VmHWM:",
    )
}

/// The resident memory now, split into anonymous pages (the heap, stacks) and file-backed ones
/// (MiB), where the system reports them.
///
/// Why: a benchmark over an open database maps its segment files, and every page a scan
/// touches counts in the resident size although the kernel can drop it at any time. A
/// residual query over 10 M games peaked at 3.3 GB resident with 34 MB of it anonymous; the
/// split says which of the two a peak was.
pub(super) fn rss_split_mib() -> Option<(f64, f64)> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    Some((
        status_mib(&status, "RssAnon:")?,
        status_mib(&status, "RssFile:")?,
    ))
}

/// The value of a `/proc/PID/status` field given in kB, in MiB.
fn status_mib(status: &str, field: &str) -> Option<f64> {
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

#[cfg(test)]
mod tests {
    use super::status_mib;

    #[test]
    fn fields_are_read_by_their_whole_name() {
        let status =
            "VmHWM:\t 3385576 kB\nVmRSS:\t 2048 kB\nRssAnon:\t   34124 kB\nRssFile:\t 3351948 kB\n";
        assert_eq!(status_mib(status, "VmHWM:"), Some(3385576.0 / 1024.0));
        assert_eq!(status_mib(status, "RssAnon:"), Some(34124.0 / 1024.0));
        assert_eq!(status_mib(status, "RssFile:"), Some(3351948.0 / 1024.0));
        assert_eq!(status_mib(status, "RssShmem:"), None);
        assert_eq!(status_mib("RssAnon:\tlots kB\n", "RssAnon:"), None);
    }
}
