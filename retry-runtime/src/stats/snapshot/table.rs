//! How a [`Snapshot`](crate::stats::Snapshot) prints: its tables of fns,
//! streams and guards, their columns aligned to the widest cell.
use std::fmt;
use std::time::Duration;

use super::{FnStats, Snapshot};
use crate::stats::record::LIMITS;
use crate::{ErrorClass, StopReason};

impl fmt::Display for Snapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut figures = Table::new(&[
            ("fn", Align::Left),
            ("calls", Align::Right),
            ("attempts", Align::Right),
            ("retried", Align::Right),
            ("recovered", Align::Right),
            ("retry rate", Align::Right),
            ("retry success", Align::Right),
            ("mean attempts", Align::Right),
            ("refused", Align::Right),
            ("gave up", Align::Left),
        ]);
        for stats in self.fns.iter().chain([&self.total]) {
            figures.row(vec![
                stats.name.to_owned(),
                stats.calls.to_string(),
                stats.attempts.to_string(),
                stats.retried.to_string(),
                stats.recovered.to_string(),
                percent(stats.retry_rate()),
                percent(stats.retry_success_rate()),
                stats
                    .mean_attempts()
                    .map_or_else(|| "-".to_owned(), |m| format!("{m:.2}")),
                stats.refused.to_string(),
                gave_up(stats),
            ]);
        }
        figures.fmt(f)?;

        let mut errors = Table::new(&[
            ("fn", Align::Left),
            ("class", Align::Left),
            ("errors", Align::Right),
            ("share", Align::Right),
            ("variants", Align::Left),
        ]);
        for stats in self.fns.iter().chain([&self.total]) {
            let mut name = stats.name;
            for class in ErrorClass::ALL {
                let count = stats.errors_of(class);
                if count == 0 {
                    continue;
                }
                let variants: Vec<String> = stats
                    .errors
                    .iter()
                    .filter(|e| e.class == class)
                    .map(|e| format!("{} {}", e.variant, e.count))
                    .collect();
                errors.row(vec![
                    std::mem::take(&mut name).to_owned(),
                    class.as_str().to_owned(),
                    count.to_string(),
                    percent(stats.class_share(class)),
                    variants.join(", "),
                ]);
            }
        }
        if !errors.rows.is_empty() {
            writeln!(f)?;
            errors.fmt(f)?;
        }
        let mut streams = Table::new(&[
            ("fn", Align::Left),
            ("streams", Align::Right),
            ("first item mean", Align::Right),
            ("first item max", Align::Right),
            ("resumes", Align::Right),
            ("partial", Align::Right),
            ("partial items", Align::Right),
            ("stalls", Align::Left),
        ]);
        let streamed = self.fns.iter().filter(|stats| !stats.stream.is_empty());
        if streamed.clone().next().is_some() {
            for stats in streamed.chain([&self.total]) {
                streams.row(vec![
                    stats.name.to_owned(),
                    stats.streams().to_string(),
                    first_item(stats.first_item_mean()),
                    first_item(stats.first_item_max()),
                    stats.resumes().to_string(),
                    stats.partial_failures().to_string(),
                    stats.partial_items().to_string(),
                    stalls(stats),
                ]);
            }
            writeln!(f)?;
            streams.fmt(f)?;
        }
        if self.guards.is_empty() {
            return Ok(());
        }
        let mut guards = Table::new(&[
            ("guard", Align::Left),
            ("kind", Align::Left),
            ("waits", Align::Right),
            ("waited", Align::Right),
            ("stopped", Align::Right),
            ("changes", Align::Right),
        ]);
        for stats in &self.guards {
            guards.row(vec![
                stats.name.to_owned(),
                stats.kind.to_owned(),
                stats.waits.to_string(),
                format!("{:.1}s", stats.waited.as_secs_f64()),
                stats.stopped.to_string(),
                stats.changes.to_string(),
            ]);
        }
        writeln!(f)?;
        guards.fmt(f)
    }
}

/// `"3 (exhausted 2, deadline 1)"`, or `"0"`.
pub(super) fn gave_up(stats: &FnStats) -> String {
    let total = stats.gave_up_total();
    if total == 0 {
        return "0".to_owned();
    }
    let reasons: Vec<String> = StopReason::ALL
        .into_iter()
        .filter(|reason| stats.gave_up(*reason) > 0)
        .map(|reason| format!("{reason} {}", stats.gave_up(reason)))
        .collect();
    format!("{total} ({})", reasons.join(", "))
}

/// `"3 (first_item 1, idle 2)"`, or `"0"`.
pub(super) fn stalls(stats: &FnStats) -> String {
    let total = stats.stalls();
    if total == 0 {
        return "0".to_owned();
    }
    let limits: Vec<String> = LIMITS
        .into_iter()
        .filter(|limit| stats.stalls_of(*limit) > 0)
        .map(|limit| format!("{} {}", limit.label(), stats.stalls_of(limit)))
        .collect();
    format!("{total} ({})", limits.join(", "))
}

/// `"412.5ms"` under a second, `"2.25s"` from there, `"-"` for none.
pub(super) fn first_item(time: Option<Duration>) -> String {
    match time {
        None => "-".to_owned(),
        Some(time) if time < Duration::from_secs(1) => {
            format!("{:.1}ms", time.as_secs_f64() * 1000.0)
        }
        Some(time) => format!("{:.2}s", time.as_secs_f64()),
    }
}

fn percent(share: Option<f64>) -> String {
    share.map_or_else(|| "-".to_owned(), |s| format!("{:.1}%", s * 100.0))
}

#[derive(Clone, Copy)]
enum Align {
    Left,
    Right,
}

/// Columns sized to their widest cell, two spaces apart.
struct Table {
    columns: Vec<(&'static str, Align)>,
    rows: Vec<Vec<String>>,
}

impl Table {
    fn new(columns: &[(&'static str, Align)]) -> Self {
        Self {
            columns: columns.to_vec(),
            rows: Vec::new(),
        }
    }

    fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let widths: Vec<usize> = self
            .columns
            .iter()
            .enumerate()
            .map(|(i, (header, _))| {
                self.rows
                    .iter()
                    .map(|row| row[i].chars().count())
                    .fold(header.chars().count(), usize::max)
            })
            .collect();
        let headers: Vec<&str> = self.columns.iter().map(|(header, _)| *header).collect();
        self.line(f, &widths, &headers)?;
        for row in &self.rows {
            let cells: Vec<&str> = row.iter().map(String::as_str).collect();
            self.line(f, &widths, &cells)?;
        }
        Ok(())
    }

    fn line(&self, f: &mut fmt::Formatter<'_>, widths: &[usize], cells: &[&str]) -> fmt::Result {
        let mut line = String::new();
        for (i, ((cell, width), (_, align))) in
            cells.iter().zip(widths).zip(&self.columns).enumerate()
        {
            if i > 0 {
                line.push_str("  ");
            }
            let pad = width.saturating_sub(cell.chars().count());
            match align {
                Align::Left => {
                    line.push_str(cell);
                    line.extend(std::iter::repeat_n(' ', pad));
                }
                Align::Right => {
                    line.extend(std::iter::repeat_n(' ', pad));
                    line.push_str(cell);
                }
            }
        }
        writeln!(f, "{}", line.trim_end())
    }
}
