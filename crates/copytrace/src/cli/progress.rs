//! Progress bars: the terminal's view of the service's [`Progress`] reports.

use std::time::Duration;

use copytrace_service::Progress;
use indicatif::{ProgressBar, ProgressStyle};

/// An `indicatif` bar that receives a service operation's progress.
#[derive(Debug, Clone)]
pub struct Bar(pub ProgressBar);

impl Progress for Bar {
    fn set_total(&self, total: u64) {
        self.0.set_length(total);
    }

    fn advance(&self, steps: u64) {
        self.0.inc(steps);
    }

    fn status(&self, status: &str) {
        self.0.set_message(status.to_owned());
    }

    fn label(&self, label: &str) {
        self.0.set_prefix(label.to_owned());
    }
}

impl Bar {
    /// A spinner counting steps of unknown total, labelled `label`.
    pub fn spinner(label: &'static str) -> Self {
        let bar = ProgressBar::new_spinner();
        bar.set_style(
            ProgressStyle::with_template("{spinner} {prefix} {pos} [{elapsed}] {wide_msg}")
                .expect("valid progress template"),
        );
        bar.set_prefix(label);
        bar.enable_steady_tick(Duration::from_millis(120));
        Self(bar)
    }

    /// A bar of known length with the template `template`.
    pub fn counted(template: &str) -> Self {
        let bar = ProgressBar::new(0);
        bar.set_style(ProgressStyle::with_template(template).expect("valid progress template"));
        Self(bar)
    }

    /// Removes the bar from the terminal.
    pub fn finish(&self) {
        self.0.finish_and_clear();
    }
}
