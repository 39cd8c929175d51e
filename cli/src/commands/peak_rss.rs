//! The process's peak resident memory, which every benchmark reports.

/// Peak resident set size in MiB (`VmHWM`), where the system reports it.
pub(super) fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}
