//! Output paths checked before the work (issue 43): every file or folder a command will write is
//! checked writable, and two outputs naming the same file are refused, before a run, a sweep or a
//! validation starts, so that a bad `--timeline` path is not found after the run with the JSON
//! already written. The files themselves are written atomically (`stats::write_atomic`: a temporary
//! file renamed into place), so a failure never leaves half of one.
//!
//! What this cannot promise: a disk that fills, or permissions that change, during the run.

use anyhow::{bail, Result};
use std::path::{Path, PathBuf};

/// What an output path names.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A file, replaced if it exists.
    File,
    /// A folder, created if missing.
    Folder,
    /// A file, or an existing folder to put the file in (`gpu measure --out`).
    FileOrFolder,
}

/// Checks each `(flag, path, kind)`: writable, not a folder where a file is wanted (or the other way
/// round), and no file named by two flags.
pub(crate) fn check(outputs: &[(&str, Option<&Path>, Kind)]) -> Result<()> {
    check_io(outputs, &[])
}

/// [`check`], and no output names a file the command reads: each `(what, path)` of `inputs` (`the
/// kernel`, `--config`; a folder input is skipped: what is read from it is not an output's name).
/// `gpumemsim run k.kern --json k.kern` is refused before the run, naming both.
pub(crate) fn check_io(
    outputs: &[(&str, Option<&Path>, Kind)],
    inputs: &[(&str, Option<&Path>)],
) -> Result<()> {
    check_outputs(outputs)?;
    let inputs: Vec<(&str, &Path, PathBuf)> = inputs
        .iter()
        .filter_map(|&(what, p)| p.map(|p| (what, p)))
        .filter(|(_, p)| p.is_file())
        .map(|(what, p)| (what, p, identity(p)))
        .collect();
    for &(flag, path, _) in outputs {
        let Some(path) = path else { continue };
        if gpumemsim::stats::written_in_place(path) && !path.is_dir() {
            continue;
        }
        let key = identity(path);
        if let Some((what, input, _)) = inputs.iter().find(|(_, _, k)| *k == key) {
            bail!(
                "{flag} {}: is {what} {} this command reads; give the output its own path",
                path.display(),
                input.display()
            );
        }
    }
    Ok(())
}

fn check_outputs(outputs: &[(&str, Option<&Path>, Kind)]) -> Result<()> {
    let mut seen: Vec<(&str, PathBuf)> = Vec::new();
    for &(flag, path, kind) in outputs {
        let Some(path) = path else { continue };
        let shown = path.display();
        let is_dir = path.is_dir();
        // A device or FIFO (`/dev/null`, `/dev/stdout`) is written in place (`stats::write_atomic`),
        // not beside: its folder need not be writable.
        let special = gpumemsim::stats::written_in_place(path) && !is_dir;
        let folder = match kind {
            Kind::File if is_dir => bail!("{flag} {shown}: is a folder; give a file name"),
            Kind::File => None,
            Kind::Folder if path.exists() && !is_dir => {
                bail!("{flag} {shown}: is a file; this output is a folder")
            }
            Kind::Folder => Some(path),
            Kind::FileOrFolder => is_dir.then_some(path),
        };
        match folder {
            Some(dir) => writable_folder(flag, dir)?,
            None if special => {}
            None => {
                let parent = match path.parent() {
                    Some(p) if !p.as_os_str().is_empty() => p,
                    _ => Path::new("."),
                };
                if !parent.is_dir() {
                    bail!(
                        "{flag} {shown}: the folder {} does not exist",
                        parent.display()
                    );
                }
                probe(flag, path, parent)?;
            }
        }
        let key = identity(path);
        // Two outputs into one device overwrite nothing (`--json /dev/null --csv /dev/null`).
        if let Some((other, _)) = seen.iter().find(|(_, k)| *k == key && !special) {
            bail!("{flag} {shown}: {other} writes the same file; give each output its own path");
        }
        seen.push((flag, key));
    }
    Ok(())
}

/// A folder that exists is probed; one that does not must have a writable nearest ancestor (the
/// command creates it).
fn writable_folder(flag: &str, dir: &Path) -> Result<()> {
    let mut at = dir;
    while !at.exists() {
        match at.parent() {
            Some(p) if !p.as_os_str().is_empty() => at = p,
            _ => {
                at = Path::new(".");
                break;
            }
        }
    }
    if !at.is_dir() {
        bail!(
            "{flag} {}: {} is a file, so the folder cannot be made",
            dir.display(),
            at.display()
        );
    }
    probe(flag, dir, at)
}

/// Creates and removes a file in `folder`: the one reliable test of writing there (permission bits
/// say nothing of read-only mounts or ACLs).
fn probe(flag: &str, path: &Path, folder: &Path) -> Result<()> {
    let p = folder.join(format!(".gpumemsim-write-check-{}", std::process::id()));
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&p)
    {
        Ok(_) => {
            let _ = std::fs::remove_file(&p);
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => bail!(
            "{flag} {}: cannot write in {}: {e}",
            path.display(),
            folder.display()
        ),
    }
}

/// The file a path names, for comparing two flags' paths (`a/../b.json` and `b.json` are one; so
/// are a link and the file it names, which is the one written).
fn identity(path: &Path) -> PathBuf {
    if let Ok(p) = std::fs::canonicalize(path) {
        return p;
    }
    let name = path.file_name().map(PathBuf::from).unwrap_or_default();
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    std::fs::canonicalize(parent)
        .map(|p| p.join(&name))
        .unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_are_checked_writable_distinct_and_of_their_kind() {
        let d = std::env::temp_dir().join(format!("gpumemsim-outputs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        let a = d.join("a.json");
        let same = d.join("x/../a.json");
        std::fs::create_dir_all(d.join("x")).unwrap();
        let e = check(&[
            ("--json", Some(&a), Kind::File),
            ("--timeline", Some(&same), Kind::File),
        ])
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("--timeline") && e.contains("--json writes the same file"),
            "{e}"
        );
        let e = check(&[("--csv", Some(&d.join("no/such/x.csv")), Kind::File)])
            .unwrap_err()
            .to_string();
        assert!(e.contains("does not exist"), "{e}");
        let e = check(&[("--json", Some(&d), Kind::File)])
            .unwrap_err()
            .to_string();
        assert!(e.contains("is a folder"), "{e}");
        std::fs::write(&a, "x").unwrap();
        let e = check(&[("--out", Some(&a.join("sub")), Kind::Folder)])
            .unwrap_err()
            .to_string();
        assert!(e.contains("is a file, so the folder cannot be made"), "{e}");
        check(&[
            ("--json", Some(&a), Kind::File),
            ("--out", Some(&d.join("new/deeper")), Kind::Folder),
            ("--csv", None, Kind::File),
        ])
        .unwrap();
        assert!(!d.join("new").exists(), "checking makes nothing");
        let _ = std::fs::remove_dir_all(&d);
    }

    /// An output that names an input (the same file, through `..` or a link) is refused, naming
    /// both; a folder input and a device output are not inputs' names.
    #[test]
    fn an_output_that_names_an_input_is_refused_naming_both() {
        let d = std::env::temp_dir().join(format!("gpumemsim-outputs-in-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("x")).unwrap();
        let k = d.join("k.kern");
        std::fs::write(&k, "groups 1").unwrap();
        let link = d.join("l.json");
        std::os::unix::fs::symlink(&k, &link).unwrap();
        for out in [k.clone(), d.join("x/../k.kern"), link] {
            let e = check_io(
                &[("--json", Some(&out), Kind::File)],
                &[("--config", None), ("the kernel", Some(&k))],
            )
            .unwrap_err()
            .to_string();
            assert!(
                e.starts_with(&format!(
                    "--json {}: is the kernel {}",
                    out.display(),
                    k.display()
                )),
                "{e}"
            );
        }
        let other = d.join("r.json");
        check_io(
            &[
                ("--json", Some(&other), Kind::File),
                ("--csv", Some(Path::new("/dev/null")), Kind::File),
            ],
            &[("the kernel", Some(&k)), ("a test folder", Some(&d))],
        )
        .unwrap();
        let _ = std::fs::remove_dir_all(&d);
    }

    /// A link and the file it names are one output (the file is what gets written); a device is
    /// written in place, so its folder is not probed, and two flags may share it.
    #[test]
    fn a_link_and_its_file_are_one_output_and_devices_are_outputs() {
        let d = std::env::temp_dir().join(format!("gpumemsim-outputs-link-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        let file = d.join("r.json");
        std::fs::write(&file, "{}").unwrap();
        let link = d.join("latest.json");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        let e = check(&[
            ("--json", Some(&link), Kind::File),
            ("--stats-json", Some(&file), Kind::File),
        ])
        .unwrap_err()
        .to_string();
        assert!(e.contains("--json writes the same file"), "{e}");
        let null = Path::new("/dev/null");
        check(&[
            ("--json", Some(null), Kind::File),
            ("--csv", Some(&file), Kind::File),
        ])
        .unwrap();
        check(&[
            ("--json", Some(null), Kind::File),
            ("--csv", Some(null), Kind::File),
        ])
        .unwrap();
        let _ = std::fs::remove_dir_all(&d);
    }
}
