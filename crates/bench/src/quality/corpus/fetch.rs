//! Fetching, verifying and unpacking the pinned packages the corpus is read from.

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use super::*;

/// File in each package's unpack directory recording the archive's and members' sha256.
pub(super) const MARKER: &str = ".verified";

/// Makes sure every package's members are unpacked and verified; returns the unpack directory
/// of each package by name.
pub(super) fn fetch_all(cache_dir: &Path) -> Result<HashMap<&'static str, PathBuf>> {
    let downloads = cache_dir.join("downloads");
    fs::create_dir_all(&downloads)
        .with_context(|| format!("creating the cache {}", downloads.display()))?;
    let mut roots = HashMap::new();
    let mut to_unpack = Vec::new();
    let mut to_download = Vec::new();
    for pkg in PACKAGES {
        let root = unpack_dir(cache_dir, pkg);
        roots.insert(pkg.name, root.clone());
        if let Some(count) = verified_members(&root, pkg) {
            eprintln!("{} {}: cached ({count} files)", pkg.name, pkg.version);
            continue;
        }
        let archive = downloads.join(pkg.file);
        if archive.exists() {
            if sha256_file(&archive)? == pkg.sha256 {
                to_unpack.push(pkg);
                continue;
            }
            eprintln!(
                "{} {}: {} has the wrong sha256, fetching it again",
                pkg.name,
                pkg.version,
                archive.display()
            );
            fs::remove_file(&archive)?;
        }
        to_download.push(pkg);
        to_unpack.push(pkg);
    }

    // The clients mostly wait on the network (and pip on a build environment for sdists), so
    // they run side by side.
    let failures: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = to_download
            .iter()
            .map(|&pkg| {
                let downloads = &downloads;
                scope.spawn(move || download(pkg, downloads).err())
            })
            .collect();
        handles
            .into_iter()
            .filter_map(|h| h.join().expect("download thread panicked"))
            .map(|e| format!("{e:#}"))
            .collect()
    });
    if !failures.is_empty() {
        bail!("{}", failures.join("\n\n"));
    }

    for pkg in to_unpack {
        let archive = downloads.join(pkg.file);
        let actual = sha256_file(&archive)?;
        if actual != pkg.sha256 {
            bail!(
                "{}: {} has sha256 {actual}, expected {}; the registry served a different \
                 file. Delete it and check the pinned version.",
                pkg.name,
                archive.display(),
                pkg.sha256
            );
        }
        let count = unpack(&archive, pkg, &roots[pkg.name])?;
        eprintln!("{} {}: extracted {count} files", pkg.name, pkg.version);
    }
    Ok(roots)
}

pub(super) fn unpack_dir(cache_dir: &Path, pkg: &Package) -> PathBuf {
    cache_dir
        .join("extracted")
        .join(format!("{}-{}", pkg.name, pkg.version))
}

/// The command that fetches `pkg` into `dir` with the registry's ordinary client.
pub(super) fn fetch_command(pkg: &Package, dir: &Path) -> Command {
    let spec = format!("{}=={}", pkg.name, pkg.version);
    let mut cmd;
    match pkg.fetch {
        Fetch::Wheel | Fetch::Sdist => {
            cmd = Command::new("python3");
            cmd.args(["-m", "pip", "download", "--no-deps"]);
            if pkg.fetch == Fetch::Wheel {
                cmd.args(["--only-binary", ":all:"]);
            } else {
                // Only this package from source: `:all:` would build pip's build
                // dependencies from source too, which takes minutes.
                cmd.args(["--no-binary", pkg.name]);
            }
            cmd.arg("--dest").arg(dir).arg(spec);
            cmd.env("PIP_DISABLE_PIP_VERSION_CHECK", "1");
        }
        Fetch::Npm => {
            cmd = Command::new("npm");
            cmd.arg("pack")
                .arg(format!("{}@{}", pkg.name, pkg.version))
                .arg("--pack-destination")
                .arg(dir);
        }
    }
    cmd
}

/// A command as it can be pasted into a shell.
pub(super) fn command_line(cmd: &Command) -> String {
    std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|arg| {
            let arg = arg.to_string_lossy();
            if arg
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./=:@".contains(c))
            {
                arg.into_owned()
            } else {
                format!("'{}'", arg.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

pub(super) fn download(pkg: &Package, dir: &Path) -> Result<()> {
    let mut cmd = fetch_command(pkg, dir);
    let line = command_line(&cmd);
    eprintln!("{} {}: downloading ({line})", pkg.name, pkg.version);
    let started = Instant::now();
    let fail = |why: String| {
        anyhow::anyhow!(
            "could not download {} {}: {why}\nRun this by hand, then run the benchmark again:\n  \
             {line}",
            pkg.name,
            pkg.version
        )
    };
    let program = cmd.get_program().to_string_lossy().into_owned();
    let output = cmd
        .output()
        .map_err(|e| fail(format!("cannot start {program}: {e}")))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(15).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        return Err(fail(format!(
            "{program} failed ({}):\n{}",
            output.status,
            tail.join("\n")
        )));
    }
    if !dir.join(pkg.file).exists() {
        return Err(fail(format!(
            "{program} succeeded but {} is not in {}",
            pkg.file,
            dir.display()
        )));
    }
    eprintln!(
        "{} {}: downloaded in {:.1} s",
        pkg.name,
        pkg.version,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

pub(super) fn sha256_hex(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}

pub(super) fn sha256_file(path: &Path) -> Result<String> {
    let mut file = fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(format!("{:x}", hasher.finalize()))
}

/// Whether `path` (inside an archive) is selected by the member pattern `pattern`.
pub(super) fn member_matches(pattern: &str, path: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == path,
        Some((dir, suffix)) => path.strip_prefix(dir).is_some_and(|rest| {
            rest.ends_with(suffix) && rest.len() > suffix.len() && !rest.contains('/')
        }),
    }
}

pub(super) fn wanted(pkg: &Package, path: &str) -> bool {
    pkg.members.iter().any(|(m, _)| member_matches(m, path))
}

/// The number of unpacked members if the marker matches the pinned archive and every member
/// still has the sha256 recorded at unpacking; `None` if anything is missing or different.
pub(super) fn verified_members(root: &Path, pkg: &Package) -> Option<usize> {
    let marker = fs::read_to_string(root.join(MARKER)).ok()?;
    let mut lines = marker.lines();
    if lines.next()? != format!("archive {}", pkg.sha256) {
        return None;
    }
    let mut members = Vec::new();
    for line in lines {
        let (sha, member) = line.split_once("  ")?;
        if !wanted(pkg, member) || sha256_hex(&fs::read(root.join(member)).ok()?) != sha {
            return None;
        }
        members.push(member);
    }
    // Every exact member must be there, and every pattern must have matched something.
    pkg.members
        .iter()
        .all(|(pattern, _)| members.iter().any(|m| member_matches(pattern, m)))
        .then_some(members.len())
}

/// Unpacks the wanted members of a verified archive into `root` and writes the marker.
pub(super) fn unpack(archive: &Path, pkg: &Package, root: &Path) -> Result<usize> {
    let mut members: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    let open = || fs::File::open(archive).with_context(|| format!("opening {}", archive.display()));
    if pkg.file.ends_with(".whl") {
        let mut zip = zip::ZipArchive::new(open()?)
            .with_context(|| format!("reading {}", archive.display()))?;
        let names: Vec<String> = zip
            .file_names()
            .map(|n| n.map(|n| n.into_owned()))
            .collect::<zip::result::ZipResult<Vec<String>>>()?
            .into_iter()
            .filter(|n| wanted(pkg, n))
            .collect();
        for name in names {
            let mut bytes = Vec::new();
            zip.by_name(&name)?.read_to_end(&mut bytes)?;
            members.insert(name, bytes);
        }
    } else {
        let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(open()?));
        for entry in tar.entries()? {
            let mut entry = entry?;
            if !entry.header().entry_type().is_file() {
                continue;
            }
            let path = entry.path()?.to_string_lossy().into_owned();
            if wanted(pkg, &path) {
                let mut bytes = Vec::new();
                entry.read_to_end(&mut bytes)?;
                members.insert(path, bytes);
            }
        }
    }
    for (pattern, _) in pkg.members {
        if !members.keys().any(|m| member_matches(pattern, m)) {
            bail!("{}: {pattern} is not in {}", pkg.name, archive.display());
        }
    }
    let mut marker = format!("archive {}\n", pkg.sha256);
    for (name, bytes) in &members {
        // Names come from the archive but only those equal to, or directly under, a pinned
        // member path are kept, so they cannot escape `root`.
        let path = root.join(name);
        fs::create_dir_all(path.parent().expect("member paths have a parent"))?;
        let tmp = path.with_extension("part");
        fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
        fs::rename(&tmp, &path)?;
        writeln!(marker, "{}  {name}", sha256_hex(bytes))?;
    }
    fs::write(root.join(MARKER), marker)?;
    Ok(members.len())
}

/// One member of a zip archive held in memory (jionlp ships its idioms zipped inside the
/// wheel).
pub(super) fn unzip_member(zip_bytes: &[u8], name: &str) -> Result<String> {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(zip_bytes))?;
    let mut text = String::new();
    zip.by_name(name)
        .with_context(|| format!("{name} in the idiom archive"))?
        .read_to_string(&mut text)?;
    Ok(text)
}

pub(super) fn sources(roots: &HashMap<&'static str, PathBuf>) -> Result<Vec<Source>> {
    let mut sources = Vec::new();
    for pkg in PACKAGES {
        let marker = fs::read_to_string(roots[pkg.name].join(MARKER))?;
        for (pattern, used_for) in pkg.members {
            let matched: Vec<&str> = marker
                .lines()
                .skip(1)
                .filter_map(|l| l.split_once("  ").map(|(_, m)| m))
                .filter(|m| member_matches(pattern, m))
                .collect();
            let file = if pattern.contains('*') {
                format!("{}!{pattern} ({} files)", pkg.file, matched.len())
            } else {
                format!("{}!{pattern}", pkg.file)
            };
            sources.push(Source {
                package: pkg.name.to_owned(),
                version: pkg.version.to_owned(),
                file,
                sha256: pkg.sha256.to_owned(),
                licence: pkg.licence.to_owned(),
                used_for: (*used_for).to_owned(),
            });
        }
    }
    Ok(sources)
}

/// `SOURCES.md` in the cache: what the unpacked files are and where they came from.
pub(super) fn write_sources_md(cache_dir: &Path, corpus: &Corpus) -> Result<()> {
    let mut md = String::from(
        "# Quality benchmark corpus: sources\n\nWritten by `copytrace-bench`. These files are \
         a local cache of registry packages; never commit them.\n\n| package | version | file \
         | sha256 (archive) | licence | used for |\n| --- | --- | --- | --- | --- | --- |\n",
    );
    for s in &corpus.sources {
        writeln!(
            md,
            "| {} | {} | `{}` | `{}` | {} | {} |",
            s.package, s.version, s.file, s.sha256, s.licence, s.used_for
        )?;
    }
    fs::write(cache_dir.join("SOURCES.md"), md)?;
    Ok(())
}
