//! `copytrace fingerprint` and `copytrace compare`.

use crate::helpers::{Workspace, library_text};

#[test]
fn compare_says_a_traditional_copy_copies_its_original_with_every_algorithm() {
    let workspace = Workspace::new();
    let original = library_text("xingchen-ch1");
    let a = workspace.write("a.txt", original);
    let b = workspace.write("b.txt", zhconv::zhconv(original, zhconv::Variant::ZhTW));
    let run = workspace.ok(&[
        "compare".as_ref(),
        a.as_os_str(),
        b.as_os_str(),
        "--json".as_ref(),
    ]);

    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let algorithms = report["algorithms"].as_array().unwrap();
    let names: Vec<&str> = algorithms
        .iter()
        .map(|a| a["algorithm"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["simhash", "minhash", "shingles", "sentences", "dna"]
    );
    for algorithm in algorithms {
        assert_eq!(algorithm["is_match"], true, "{algorithm}");
    }
    assert_eq!(report["matcher"]["is_match"], true);
    assert!(report["matcher"]["coverage"].as_f64().unwrap() > 0.9);
}

#[test]
fn compare_finds_no_copy_between_two_chapters_of_one_novel() {
    let workspace = Workspace::new();
    let a = workspace.write("a.txt", library_text("xingchen-ch1"));
    let b = workspace.write("b.txt", library_text("xingchen-ch2"));
    let run = workspace.ok(&["compare".as_ref(), a.as_os_str(), b.as_os_str()]);

    assert!(
        run.stdout.contains("matcher: no copy found"),
        "{}",
        run.stdout
    );
    assert!(
        !run.stdout.contains(" yes"),
        "no algorithm may call it a match: {}",
        run.stdout
    );
}

#[test]
fn fingerprint_prints_document_and_window_fingerprints_of_one_algorithm() {
    let workspace = Workspace::new();
    let text = library_text("news-harbor");
    let file = workspace.write("news.txt", text);
    let run = workspace.ok(&[
        "fingerprint".as_ref(),
        "--algo".as_ref(),
        "dna".as_ref(),
        "--json".as_ref(),
        file.as_os_str(),
    ]);

    let parsed: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let list = parsed.as_array().unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["algorithm"], "dna");
    assert_eq!(list[0]["document"]["kind"], "dna");
    let windows = list[0]["windows"].as_array().unwrap();
    assert!(windows.len() > 10, "{} windows", windows.len());
    for w in windows {
        let (start, end) = (
            w["byte_start"].as_u64().unwrap(),
            w["byte_end"].as_u64().unwrap(),
        );
        assert!(start < end && end as usize <= text.len());
        assert!(text.is_char_boundary(start as usize) && text.is_char_boundary(end as usize));
    }
}

#[test]
fn fingerprint_of_a_missing_file_is_a_one_line_error() {
    let workspace = Workspace::new();
    let run = workspace.run(&["fingerprint", "missing.txt"]);
    assert!(run.one_line_error().contains("missing.txt"));
}
