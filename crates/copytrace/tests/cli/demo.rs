//! `copytrace demo` checks itself against the sample site; the test checks its output too.

use copytrace::demo::sample_site;

use crate::helpers::{Workspace, run_command};

#[test]
fn the_demo_lists_every_pirated_page_against_the_right_work() {
    let workspace = Workspace::new();
    let mut command = workspace.bare();
    command.arg("demo");
    let run = run_command(&mut command).success();
    let out = &run.stdout;

    let line_of = |path: &str| {
        out.lines()
            .find(|l| l.split_whitespace().any(|word| word == path))
            .unwrap_or_else(|| panic!("{path} is not in the demo output:\n{out}"))
    };
    let site = sample_site();
    for page in &site.pages {
        let line = line_of(&page.path);
        assert!(line.trim_start().starts_with('✓'), "{line}");
        assert!(!line.contains("BUT"), "{line}");
        if page.disallowed {
            assert!(line.contains("not fetched (robots.txt)"), "{line}");
        } else if page.copies.is_empty() {
            assert!(line.contains("not reported"), "{line}");
        } else {
            for work in &page.copies {
                assert!(line.contains(&format!("found {work}")), "{line}");
            }
        }
    }
    // The report section names every work that was found.
    for work in ["xingchen-ch1", "xingchen-ch2", "jianghu-ch1", "news-harbor"] {
        assert!(
            out.matches(work).count() >= 2,
            "{work} is missing from the report:\n{out}"
        );
    }
    assert_eq!(
        out.trim_end().lines().last(),
        Some(
            "All pirated sample pages were found against the right work; no unrelated page was \
             accused."
        )
    );
    assert!(
        std::fs::read_dir(workspace.root())
            .expect("workspace")
            .next()
            .is_none(),
        "the demo left files in the working directory"
    );
}
