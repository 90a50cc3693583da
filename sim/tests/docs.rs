//! The README and the `docs/` book cannot go stale (issue 45 item 2). Three kinds of marks, all HTML
//! comments (invisible when rendered):
//!
//! - `<!-- output of: COMMAND -->` before a fenced block: the test runs COMMAND with `bash` (so a
//!   `| grep` filter works) in a fresh folder that sees the repository's `configs/`, `workloads/`,
//!   `reports/` and `docs/`, with this build's `gpumemsim` first on `PATH`, and compares its standard
//!   output with the block line for line (trailing spaces ignored). A block may open with `$ COMMAND`.
//! - `<!-- file: PATH -->` before a fenced block: the block is the file's text, verbatim.
//! - `<!-- quoted: 2492 3496 ... -->` in a paragraph: each number must be written in that paragraph and
//!   printed by one of the checked commands of the same section (since the last heading).
//!
//! A stale block fails with the lines that differ; a stale quoted number fails naming the number, the
//! line it stood in, and what the build prints there now. `GPUMEMSIM_BLESS_DOCS=1` rewrites the output
//! blocks with what the build prints (numbers in prose are never rewritten: read them and edit).
//!
//! Also checked here: every relative link of the pages points at a file, and no command a page gives in a
//! `sh` block writes into a tracked folder (outputs go to fresh folders).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The pages checked: the README, the book, and the pages they send a newcomer to first.
fn pages() -> Vec<PathBuf> {
    let mut v = vec![root().join("README.md"), root().join("CHANGELOG.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("docs/ exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    v.extend(docs);
    v.push(root().join("workloads/quickstart/README.md"));
    v.push(root().join("workloads/README.md"));
    v.push(root().join("workloads/traces/sample/README.md"));
    v.push(root().join("reports/speed/passes.md"));
    v
}

fn rel(p: &Path) -> String {
    p.strip_prefix(root()).unwrap_or(p).display().to_string()
}

#[derive(Debug, Clone)]
enum Mark {
    Output(String),
    File(String),
}

/// A marked fenced block: where it is, what it claims, what it holds.
#[derive(Debug, Clone)]
struct Block {
    page: PathBuf,
    /// 0-based line of the mark.
    line: usize,
    /// 0-based lines of the block's content (`start..end`).
    start: usize,
    end: usize,
    indent: usize,
    mark: Mark,
    content: Vec<String>,
    /// Index of the section (headings seen before it).
    section: usize,
}

fn mark_of(line: &str) -> Option<Mark> {
    let t = line.trim();
    let inner = t.strip_prefix("<!--")?.strip_suffix("-->")?.trim();
    if let Some(c) = inner.strip_prefix("output of:") {
        Some(Mark::Output(c.trim().to_string()))
    } else {
        inner
            .strip_prefix("file:")
            .map(|f| Mark::File(f.trim().to_string()))
    }
}

fn is_heading(line: &str, in_fence: bool) -> bool {
    !in_fence && line.starts_with('#') && line.trim_start_matches('#').starts_with(' ')
}

fn parse(page: &Path) -> (Vec<String>, Vec<Block>, Vec<(usize, usize, Vec<String>)>) {
    let text = std::fs::read_to_string(page).unwrap_or_else(|e| panic!("{}: {e}", rel(page)));
    let lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut blocks = Vec::new();
    let mut quoted = Vec::new();
    let mut section = 0;
    let mut in_fence = false;
    let mut i = 0;
    while i < lines.len() {
        let l = &lines[i];
        if l.trim_start().starts_with("```") {
            in_fence = !in_fence;
            i += 1;
            continue;
        }
        if is_heading(l, in_fence) {
            section += 1;
        }
        if !in_fence {
            if let Some(q) = l.split("<!-- quoted:").nth(1) {
                let nums = q
                    .split("-->")
                    .next()
                    .unwrap_or("")
                    .split_whitespace()
                    .map(str::to_string)
                    .collect();
                quoted.push((i, section, nums));
            }
            if let Some(mark) = mark_of(l) {
                let fence = lines
                    .get(i + 1)
                    .filter(|f| f.trim_start().starts_with("```"))
                    .unwrap_or_else(|| {
                        panic!(
                            "{}:{}: a mark must stand on the line right before a fenced block",
                            rel(page),
                            i + 1
                        )
                    });
                let indent = fence.len() - fence.trim_start().len();
                let start = i + 2;
                let mut end = start;
                while end < lines.len() && !lines[end].trim_start().starts_with("```") {
                    end += 1;
                }
                assert!(end < lines.len(), "{}:{}: unclosed block", rel(page), i + 2);
                let content = lines[start..end]
                    .iter()
                    .map(|l| {
                        l.get(indent.min(l.len() - l.trim_start().len())..)
                            .unwrap_or("")
                            .to_string()
                    })
                    .collect();
                blocks.push(Block {
                    page: page.to_path_buf(),
                    line: i,
                    start,
                    end,
                    indent,
                    mark,
                    content,
                    section,
                });
                i = end + 1;
                continue;
            }
        }
        i += 1;
    }
    (lines, blocks, quoted)
}

/// The folder commands run in: links to the repository's inputs, nothing else, so a command that
/// writes writes here.
fn sandbox(name: &str) -> (PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("gpumemsim-docs-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let bin = dir.join("bin");
    let work = dir.join("work");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_gpumemsim"), bin.join("gpumemsim")).unwrap();
    for d in ["configs", "workloads", "reports", "docs"] {
        std::os::unix::fs::symlink(root().join(d), work.join(d)).unwrap();
    }
    (bin, work)
}

fn run(cmd: &str, bin: &Path, work: &Path) -> Vec<String> {
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("bash")
        .arg("-c")
        .arg(cmd)
        .current_dir(work)
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .output()
        .expect("bash runs");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.trim_end().to_string())
        .collect()
}

fn trimmed(v: &[String]) -> Vec<String> {
    let mut v: Vec<String> = v.iter().map(|l| l.trim_end().to_string()).collect();
    while v.last().is_some_and(|l| l.is_empty()) {
        v.pop();
    }
    v
}

/// The numbers written in `s`, as written (`3,036`, `517.8`), not inside words (`H100`).
fn numbers(s: &str) -> Vec<String> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let starts = b[i].is_ascii_digit()
            && (i == 0
                || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_' || b[i - 1] == b'.'));
        if !starts {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < b.len()
            && (b[j].is_ascii_digit()
                || ((b[j] == b'.' || b[j] == b',') && j + 1 < b.len() && b[j + 1].is_ascii_digit()))
        {
            j += 1;
        }
        if j == b.len() || !(b[j].is_ascii_alphabetic() || b[j] == b'_') {
            out.push(s[i..j].to_string());
        }
        i = j;
    }
    out
}

fn norm(n: &str) -> String {
    n.replace(',', "")
}

/// The command's documented and actual output (`$ COMMAND` opening line dropped).
fn documented(b: &Block, cmd: &str) -> Result<Vec<String>, String> {
    let mut c = b.content.clone();
    if let Some(first) = c.first() {
        if let Some(shown) = first.strip_prefix("$ ") {
            if shown.trim() != cmd {
                return Err(format!(
                    "{}:{}: the block shows `$ {}` but the mark runs `{cmd}`",
                    rel(&b.page),
                    b.start + 1,
                    shown.trim()
                ));
            }
            c.remove(0);
        }
    }
    Ok(trimmed(&c))
}

#[test]
fn every_quoted_output_and_number_is_what_the_build_prints() {
    let bless = std::env::var_os("GPUMEMSIM_BLESS_DOCS").is_some();
    let (bin, work) = sandbox("outputs");
    let mut failures = Vec::new();
    let mut all: Vec<(
        Vec<String>,
        Vec<Block>,
        Vec<(usize, usize, Vec<String>)>,
        PathBuf,
    )> = pages()
        .into_iter()
        .filter(|p| p.exists())
        .map(|p| {
            let (l, b, q) = parse(&p);
            (l, b, q, p)
        })
        .collect();
    let commands: Vec<(usize, usize, String)> = all
        .iter()
        .enumerate()
        .flat_map(|(pi, (_, blocks, _, _))| {
            blocks
                .iter()
                .enumerate()
                .filter_map(move |(bi, b)| match &b.mark {
                    Mark::Output(c) => Some((pi, bi, c.clone())),
                    Mark::File(_) => None,
                })
        })
        .collect();
    assert!(
        commands.len() >= 5,
        "the README's outputs are marked: {}",
        commands.len()
    );
    // Two at a time (CI has 2 cores); each command is small.
    let outputs: Vec<Vec<String>> = std::thread::scope(|s| {
        let chunks: Vec<_> = commands.chunks(commands.len().div_ceil(2)).collect();
        let hs: Vec<_> = chunks
            .into_iter()
            .map(|ch| {
                let (bin, work) = (&bin, &work);
                s.spawn(move || {
                    ch.iter()
                        .map(|(_, _, c)| run(c, bin, work))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    for ((pi, bi, cmd), actual) in commands.iter().zip(&outputs) {
        let b = &all[*pi].1[*bi];
        let actual = trimmed(actual);
        match documented(b, cmd) {
            Err(e) => failures.push(e),
            Ok(doc) if doc != actual => {
                let mut msg = format!(
                    "{}:{}: the quoted output of `{cmd}` is stale:",
                    rel(&b.page),
                    b.line + 1
                );
                for k in 0..doc.len().max(actual.len()) {
                    let (d, a) = (doc.get(k), actual.get(k));
                    if d != a {
                        msg.push_str(&format!(
                            "\n    line {}: quoted {:?}\n    {}  build prints {:?}",
                            k + 1,
                            d.map_or("(nothing)", String::as_str),
                            " ".repeat(format!("{}", k + 1).len()),
                            a.map_or("(nothing)", String::as_str)
                        ));
                    }
                }
                failures.push(msg);
            }
            Ok(_) => {}
        }
    }
    // Numbers in prose, against the section's checked outputs.
    for (pi, (lines, blocks, quoted, page)) in all.iter().enumerate() {
        for (line, section, nums) in quoted {
            let mut para = String::new();
            let mut k = *line;
            loop {
                let l = &lines[k];
                let l = l.split("<!--").next().unwrap_or("");
                para.insert_str(0, &format!("{l}\n"));
                if k == 0 || lines[k - 1].trim().is_empty() {
                    break;
                }
                k -= 1;
            }
            let prose: BTreeSet<String> = numbers(&para).iter().map(|n| norm(n)).collect();
            let in_section: Vec<(&Block, &Vec<String>)> = commands
                .iter()
                .zip(&outputs)
                .filter(|((p, b, _), _)| *p == pi && blocks[*b].section == *section)
                .map(|((_, b, _), o)| (&blocks[*b], o))
                .collect();
            if in_section.is_empty() {
                failures.push(format!(
                    "{}:{}: `quoted:` numbers need a checked output in the same section",
                    rel(page),
                    line + 1
                ));
                continue;
            }
            for n in nums {
                if !prose.contains(&norm(n)) {
                    failures.push(format!(
                        "{}:{}: the mark lists {n}, which the paragraph does not say",
                        rel(page),
                        line + 1
                    ));
                    continue;
                }
                let printed = in_section.iter().any(|(_, o)| {
                    o.iter()
                        .any(|l| numbers(l).iter().any(|x| norm(x) == norm(n)))
                });
                if printed {
                    continue;
                }
                // Where it stood in the quoted output, and what the build prints there now.
                let mut hint = String::new();
                for (b, o) in &in_section {
                    for (li, dl) in b.content.iter().enumerate() {
                        let dn = numbers(dl);
                        if let Some(j) = dn.iter().position(|x| norm(x) == norm(n)) {
                            let skip = usize::from(b.content[0].starts_with("$ "));
                            let now = o
                                .get(li.saturating_sub(skip))
                                .map(|al| numbers(al).get(j).cloned().unwrap_or_default());
                            hint = format!(
                                "; it stood in {dl:?}, where the build now prints {}",
                                now.unwrap_or_else(|| "nothing".into())
                            );
                        }
                    }
                }
                let cmds: Vec<String> = in_section
                    .iter()
                    .map(|(b, _)| match &b.mark {
                        Mark::Output(c) => format!("`{c}`"),
                        Mark::File(f) => f.clone(),
                    })
                    .collect();
                failures.push(format!(
                    "{}:{}: the prose quotes {n}, which none of this section's commands prints now ({}){hint}",
                    rel(page),
                    line + 1,
                    cmds.join(", ")
                ));
            }
        }
    }
    // Quoted files.
    for (_, blocks, _, _) in &all {
        for b in blocks {
            if let Mark::File(f) = &b.mark {
                let want = std::fs::read_to_string(root().join(f))
                    .unwrap_or_else(|e| panic!("{}:{}: {f}: {e}", rel(&b.page), b.line + 1));
                let want: Vec<String> = want.lines().map(str::to_string).collect();
                if trimmed(&b.content) != trimmed(&want) {
                    failures.push(format!(
                        "{}:{}: the block is not {f} as it is in the repository",
                        rel(&b.page),
                        b.line + 1
                    ));
                }
            }
        }
    }
    if bless {
        let mut by_page: Vec<Vec<(usize, usize, usize, Vec<String>)>> = vec![Vec::new(); all.len()];
        for ((pi, bi, _), o) in commands.iter().zip(&outputs) {
            let b = &all[*pi].1[*bi];
            let mut content = trimmed(o);
            if b.content.first().is_some_and(|l| l.starts_with("$ ")) {
                content.insert(0, b.content[0].clone());
            }
            by_page[*pi].push((b.start, b.end, b.indent, content));
        }
        for (pi, (_, blocks, _, _)) in all.iter().enumerate() {
            for b in blocks {
                if let Mark::File(f) = &b.mark {
                    let text = std::fs::read_to_string(root().join(f)).unwrap_or_default();
                    by_page[pi].push((
                        b.start,
                        b.end,
                        b.indent,
                        text.lines().map(str::to_string).collect(),
                    ));
                }
            }
        }
        for (pi, edits) in by_page.iter_mut().enumerate() {
            let (lines, _, _, page) = &mut all[pi];
            edits.sort_by(|a, b| b.0.cmp(&a.0));
            for (start, end, indent, content) in edits.iter() {
                let pad = " ".repeat(*indent);
                let new: Vec<String> = content
                    .iter()
                    .map(|l| {
                        if l.is_empty() {
                            String::new()
                        } else {
                            format!("{pad}{l}")
                        }
                    })
                    .collect();
                lines.splice(*start..*end, new);
            }
            let mut text = lines.join("\n");
            text.push('\n');
            std::fs::write(&*page, text).unwrap();
        }
    }
    let _ = std::fs::remove_dir_all(work.parent().unwrap());
    assert!(
        failures.is_empty() || bless,
        "{} stale quotation(s) in the documentation (GPUMEMSIM_BLESS_DOCS=1 rewrites the output blocks; \
         numbers in prose are yours to edit):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_relative_link_of_the_documentation_points_at_a_file() {
    let mut bad = Vec::new();
    for page in pages().into_iter().filter(|p| p.exists()) {
        let text = std::fs::read_to_string(&page).unwrap();
        let dir = page.parent().unwrap();
        for (n, line) in text.lines().enumerate() {
            for part in line.split("](").skip(1) {
                let target = part.split(')').next().unwrap_or("");
                let target = target.split('#').next().unwrap_or("");
                if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                let p = dir.join(target);
                if !p.exists() {
                    bad.push(format!("{}:{}: {target}", rel(&page), n + 1));
                }
            }
        }
    }
    assert!(bad.is_empty(), "links to nothing:\n{}", bad.join("\n"));
}

#[test]
fn commands_the_documentation_gives_never_write_into_the_repository() {
    // Top-level entries of the repository: an output there would overwrite or add to tracked files.
    let tracked = [
        "sim",
        "configs",
        "workloads",
        "reports",
        "docs",
        "scripts",
        "benches",
        "fuzz",
        "notes",
        ".ci",
        "python",
        "README.md",
        "CHANGELOG.md",
        "Cargo.toml",
        "Cargo.lock",
        "build.rs",
    ];
    let flags = [
        "--out",
        "-o",
        "--json",
        "--csv",
        "--stats-json",
        "--timeline",
        "--interval-csv",
        ">",
    ];
    let mut bad = Vec::new();
    for page in pages().into_iter().filter(|p| p.exists()) {
        let text = std::fs::read_to_string(&page).unwrap();
        let mut in_sh = false;
        let mut command = String::new();
        for (n, line) in text.lines().enumerate() {
            let t = line.trim_start();
            if t.starts_with("```") {
                in_sh = !in_sh && (t == "```sh" || t == "```bash");
                continue;
            }
            if !in_sh {
                continue;
            }
            // One command over its continuation lines, comments dropped.
            let code = t.split(" #").next().unwrap_or("");
            if let Some(head) = code.trim_end().strip_suffix('\\') {
                command.push_str(head);
                command.push(' ');
                continue;
            }
            command.push_str(code);
            let code = std::mem::take(&mut command);
            let words: Vec<&str> = code.split_whitespace().collect();
            // A sweep without --out writes beside its spec (reports/NAME/).
            if let Some(i) = words.iter().position(|w| *w == "sweep") {
                let spec = words[i + 1..].iter().find(|w| w.ends_with(".toml"));
                let sub = words.get(i + 1).copied().unwrap_or("");
                if spec.is_some()
                    && !["status", "merge"].contains(&sub)
                    && !words
                        .iter()
                        .any(|w| w.trim_start_matches('[').starts_with("--out"))
                {
                    bad.push(format!(
                        "{}:{}: sweep without --out writes beside its spec",
                        rel(&page),
                        n + 1
                    ));
                }
            }
            for w in words.windows(2) {
                let (flag, value) = (w[0], w[1]);
                let value = value.trim_matches(|c| c == '"' || c == '\'');
                let (flag, value) = match flag.split_once('=') {
                    Some((f, v)) if flags.contains(&f) => (f, v),
                    _ => (flag, value),
                };
                if !flags.contains(&flag) {
                    continue;
                }
                let first = value
                    .trim_start_matches("./")
                    .split('/')
                    .next()
                    .unwrap_or("");
                if tracked.contains(&first) {
                    bad.push(format!("{}:{}: {flag} {value}", rel(&page), n + 1));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "commands that would write into the repository (write to a fresh folder; shipped reports are \
         regenerated by scripts/reports.sh):\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_numbers_of_a_line_are_found_as_written() {
    assert_eq!(
        numbers("H100 — 3,036 cycles, 1.8 µs; 517.8."),
        ["3,036", "1.8", "517.8"]
    );
    assert_eq!(numbers("v70_same_i8 x2 10^5"), ["10", "5"]);
}

/// The sample trace that ships in `workloads/traces/sample/` (issue 45 item 4): made by the project's
/// own synthesiser (`trace::synth`), so it carries no third-party data, and small (8 blocks of 128
/// threads, 4 iterations). `GPUMEMSIM_BLESS_DOCS=1` writes it.
#[test]
fn the_shipped_sample_trace_is_the_synthesisers_output() {
    use gpumemsim::trace::synth::{kernel_text, Synth, SynthAtomics};
    let s = Synth {
        atomics: SynthAtomics::Distinct,
        iters: 4,
        blocks: 8,
        block_threads: 128,
    };
    let dir = root().join("workloads/traces/sample");
    let want = [
        ("kernel-1.traceg", kernel_text(&s)),
        ("kernelslist.g", "kernel-1.traceg\n".to_string()),
    ];
    for (name, text) in &want {
        let path = dir.join(name);
        if std::env::var_os("GPUMEMSIM_BLESS_DOCS").is_some() {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, text).unwrap();
        }
        let got = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (GPUMEMSIM_BLESS_DOCS=1 writes it)", rel(&path)));
        assert!(
            &got == text,
            "{} is not trace::synth's output for {s:?} (GPUMEMSIM_BLESS_DOCS=1 rewrites it)",
            rel(&path)
        );
    }
}

/// `scripts/timeline-png.py` without matplotlib says what to install, not a traceback (issue 45 item 4).
#[test]
fn the_timeline_script_without_matplotlib_says_what_to_install() {
    if Command::new("python3").arg("--version").output().is_err() {
        eprintln!("skipped: no python3");
        return;
    }
    let fake = std::env::temp_dir().join(format!("gpumemsim-no-mpl-{}", std::process::id()));
    std::fs::create_dir_all(fake.join("matplotlib")).unwrap();
    std::fs::write(
        fake.join("matplotlib/__init__.py"),
        "raise ImportError('No module named matplotlib')\n",
    )
    .unwrap();
    let out = Command::new("python3")
        .arg(root().join("scripts/timeline-png.py"))
        .arg(fake.join("t.json"))
        .arg(fake.join("t.png"))
        .env("PYTHONPATH", &fake)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let _ = std::fs::remove_dir_all(&fake);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("needs matplotlib") && err.contains("pip install matplotlib"),
        "{err}"
    );
    assert!(!err.contains("Traceback"), "{err}");
}

/// Points of each shipped report rerun per test run (more: `GPUMEMSIM_REPORT_POINTS=N`, `all` for every
/// point). Four keep CI short (about 5 s in a test build on 2 cores).
fn report_points() -> Option<usize> {
    match std::env::var("GPUMEMSIM_REPORT_POINTS").ok().as_deref() {
        Some("all") => None,
        Some(n) => Some(
            n.parse()
                .expect("GPUMEMSIM_REPORT_POINTS: a number or `all`"),
        ),
        None => Some(4),
    }
}

/// The shipped sweep reports (`reports/NAME/` beside `reports/NAME.toml`) are what this build computes
/// (issue 45 item 2): some points of each, chosen by a shard of the plan, are run again and every
/// statistic, reported quantity and final-state count compared with the shipped `results.json`. A
/// point the build plans that the report lacks means its config or workload changed since.
#[test]
fn shipped_reports_are_what_the_build_computes() {
    use gpumemsim::sweep::exec::{Outcome, PointResult};
    use gpumemsim::sweep::results::{load_table_results, read_manifest};
    use std::collections::BTreeMap;
    fn values(r: &PointResult) -> BTreeMap<String, f64> {
        let mut v = BTreeMap::new();
        if let Outcome::Ok {
            stats,
            reports,
            states,
            ..
        } = &r.outcome
        {
            for s in stats {
                v.insert(format!("{}.{}", s.location, s.metric), s.value);
            }
            for (n, x) in reports {
                v.insert(format!("report.{n}"), *x as f64);
            }
            for s in states {
                v.insert(format!("outcome: {}", s.state), s.count as f64);
            }
        }
        v
    }
    let (bin, work) = sandbox("reports");
    let mut failures = Vec::new();
    let mut specs: Vec<PathBuf> = std::fs::read_dir(root().join("reports"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "toml")
                && p.with_extension("").join("results.json").exists()
        })
        .collect();
    specs.sort();
    assert!(specs.len() >= 4, "{specs:?}");
    for spec in &specs {
        let name = spec.file_stem().unwrap().to_string_lossy().to_string();
        let shipped_dir = spec.with_extension("");
        let m = read_manifest(&shipped_dir).unwrap();
        let shipped = load_table_results(&shipped_dir, &m).unwrap_or_else(|| {
            panic!("reports/{name}/results.json does not hold every point of its sweep.json")
        });
        let shards = report_points().map_or(1, |k| shipped.len().div_ceil(k.max(1)).max(1));
        let out = format!("check-{name}");
        let cmd = format!(
            "gpumemsim sweep plan reports/{name}.toml --out {out} --shards {shards} >/dev/null && \
             gpumemsim sweep reports/{name}.toml --out {out} --shard 0 2>&1 >/dev/null | grep -v '^\\[' ; true"
        );
        let log = run(&cmd, &bin, &work);
        let points = work.join(&out).join("points");
        let mut ran: Vec<PointResult> = std::fs::read_dir(&points)
            .map(|d| {
                d.map(|e| {
                    serde_json::from_slice(&std::fs::read(e.unwrap().path()).unwrap()).unwrap()
                })
                .collect()
            })
            .unwrap_or_default();
        ran.sort_by(|a, b| a.point.id.cmp(&b.point.id));
        if ran.is_empty() {
            failures.push(format!("reports/{name}: no point ran:\n{}", log.join("\n")));
            continue;
        }
        for r in &ran {
            let what = format!(
                "{} {}seed {}",
                r.point.workload,
                r.point
                    .params
                    .iter()
                    .map(|(k, v)| format!("{k}={v} "))
                    .collect::<String>(),
                r.point.seed
            );
            let Some(s) = shipped.iter().find(|s| s.point.id == r.point.id) else {
                failures.push(format!(
                    "reports/{name}: this build plans point {} ({what}), which the shipped report does not hold: \
                     its config or workload changed since it was generated",
                    r.point.id
                ));
                continue;
            };
            let (now, then) = (values(r), values(s));
            let mut diff: Vec<String> = now
                .iter()
                .filter(|(k, v)| {
                    then.get(*k)
                        .is_none_or(|t| (*t - **v).abs() > 1e-9 * v.abs().max(1.0))
                })
                .map(|(k, v)| {
                    format!(
                        "{k}: shipped {}, build {v}",
                        then.get(k).map_or("(none)".into(), |t| t.to_string())
                    )
                })
                .collect();
            diff.extend(
                then.keys()
                    .filter(|k| !now.contains_key(*k))
                    .map(|k| format!("{k}: shipped, build has none")),
            );
            if r.outcome.status() != s.outcome.status() {
                diff.push(format!(
                    "status: shipped {}, build {}",
                    s.outcome.status(),
                    r.outcome.status()
                ));
            }
            if !diff.is_empty() {
                let n = diff.len();
                diff.truncate(6);
                failures.push(format!(
                    "reports/{name}: point {} ({what}) differs in {n} column(s): {}{}",
                    r.point.id,
                    diff.join("; "),
                    if n > 6 { "; ..." } else { "" }
                ));
            }
        }
    }
    let _ = std::fs::remove_dir_all(work.parent().unwrap());
    assert!(
        failures.is_empty(),
        "shipped reports are stale; regenerate them with `scripts/reports.sh --in-place` (and look at the \
         charts and captions):\n{}",
        failures.join("\n")
    );
}

/// The shipped comparisons of measurements with the simulator (`reports/measured/*/compare*/`,
/// `reports/measured/*-vs-*/`; `scripts/reports.sh --only measured` makes them) are what this build
/// computes (issue 45 item 2): a few cases of each measurement (the overhead probe, two benchmarks,
/// one litmus test) are compared again, and each simulated cycle count and litmus state count must
/// equal the shipped one.
#[test]
fn shipped_comparisons_are_what_the_build_computes() {
    use serde_json::Value;
    use std::collections::BTreeMap;
    // `bench,group,case` → `cycles` of a comparison.csv (fields may be quoted).
    fn cycles(csv: &str) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        let mut lines = csv.lines();
        let header: Vec<&str> = lines.next().unwrap_or("").split(',').collect();
        let at = header
            .iter()
            .position(|h| *h == "cycles")
            .expect("a cycles column");
        for l in lines {
            let (mut fields, mut cur, mut quoted) = (Vec::new(), String::new(), false);
            for ch in l.chars() {
                match ch {
                    '"' => quoted = !quoted,
                    ',' if !quoted => fields.push(std::mem::take(&mut cur)),
                    c => cur.push(c),
                }
            }
            fields.push(cur);
            out.insert(fields[..3].join(","), fields[at].clone());
        }
        out
    }
    let (bin, work) = sandbox("comparisons");
    let mut summaries = Vec::new();
    for e in std::fs::read_dir(root().join("reports/measured")).unwrap() {
        let d = e.unwrap().path();
        if !d.is_dir() {
            continue;
        }
        if d.join("comparison.summary.json").is_file() {
            summaries.push(d.clone());
        }
        for s in std::fs::read_dir(&d).unwrap() {
            let s = s.unwrap().path();
            let name = s.file_name().unwrap().to_string_lossy().to_string();
            if name.starts_with("compare") && s.join("comparison.summary.json").is_file() {
                summaries.push(s);
            }
        }
    }
    summaries.sort();
    assert!(summaries.len() >= 5, "{summaries:?}");
    let mut failures = Vec::new();
    for (k, dir) in summaries.iter().enumerate() {
        let shown = dir.strip_prefix(root()).unwrap().display().to_string();
        let summary: Value =
            serde_json::from_slice(&std::fs::read(dir.join("comparison.summary.json")).unwrap())
                .unwrap();
        let measured_path = summary["measurement"].as_str().unwrap();
        let config = summary["config"].as_str().unwrap();
        let mut m: Value =
            serde_json::from_slice(&std::fs::read(root().join(measured_path)).unwrap()).unwrap();
        let mut others = 0;
        if let Some(b) = m["benchmarks"].as_array_mut() {
            b.retain(|c| {
                let keep = c["bench"] == "overhead" || (c["status"] == "ok" && others < 2);
                if keep && c["bench"] != "overhead" {
                    others += 1;
                }
                keep
            });
        }
        if let Some(l) = m["litmus"].as_array_mut() {
            l.truncate(1);
        }
        // Slopes name cases this reduced file may not keep.
        if let Some(d) = m["derived"].as_array_mut() {
            d.clear();
        }
        let reduced = work.join(format!("measured-{k}.json"));
        std::fs::write(&reduced, serde_json::to_vec(&m).unwrap()).unwrap();
        let cfg = if config.contains("(embedded)") {
            String::new()
        } else {
            format!("--config {config}")
        };
        let out = format!("cmp-{k}");
        run(
            &format!(
                "gpumemsim compare --measured {} {cfg} --out {out} >/dev/null 2>&1; true",
                reduced.display()
            ),
            &bin,
            &work,
        );
        let Ok(now_csv) = std::fs::read_to_string(work.join(&out).join("comparison.csv")) else {
            failures.push(format!("{shown}: the comparison did not run"));
            continue;
        };
        let then = cycles(&std::fs::read_to_string(dir.join("comparison.csv")).unwrap());
        for (case, c) in cycles(&now_csv) {
            match then.get(&case) {
                Some(t) if *t == c => {}
                t => failures.push(format!(
                    "{shown}: {case}: shipped {} cycles, build {c}",
                    t.map_or("(none)", |s| s.as_str())
                )),
            }
        }
        let now: Value = serde_json::from_slice(
            &std::fs::read(work.join(&out).join("comparison.summary.json")).unwrap(),
        )
        .unwrap();
        for t in now["litmus"].as_array().into_iter().flatten() {
            let same = summary["litmus"].as_array().and_then(|l| {
                l.iter()
                    .find(|s| s["test"] == t["test"] && s["variant"] == t["variant"])
            });
            if same.map(|s| &s["states"]) != Some(&t["states"]) {
                failures.push(format!(
                    "{shown}: litmus {} {}: simulated states differ from the shipped ones",
                    t["test"], t["variant"]
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "shipped comparisons are stale; regenerate them with `scripts/reports.sh --in-place --only \
         measured`:\n{}",
        failures.join("\n")
    );
}
