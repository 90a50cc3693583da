//! The one-pass reader against the general one: every line it takes is read to the same instruction,
//! registers and addresses, and it ends where the line ends; every line it hands back is left for the
//! general reader (and its error).

use super::super::decode::{parse_inst, push_inst, OpCache};
use super::super::parse::OpenBlock;
use super::super::synth::{kernel_text, Synth, SynthAtomics};
use super::super::*;
use super::{hex8, inst};
use std::path::Path;

fn open() -> OpenBlock {
    OpenBlock {
        id: [0; 3],
        warps: Vec::new(),
        line: 0,
        id_line: 0,
        offset: 0,
        first: 7,
        insts: Vec::new(),
        regs: Vec::new(),
        addrs: Vec::new(),
        unknown: Vec::new(),
        threads: 0,
    }
}

type Read = (Vec<TraceInst>, Vec<TraceReg>, Vec<u64>, Vec<(String, u64)>);

fn parts(b: OpenBlock) -> Read {
    (b.insts, b.regs, b.addrs, b.unknown)
}

/// The general reader on the line as `Reader::line` hands it over (trimmed).
fn general(line: &str, lineinfo: bool) -> Result<Read, String> {
    let mut b = open();
    parse_inst(
        line.trim().as_bytes(),
        lineinfo,
        5,
        &mut b,
        &mut OpCache::default(),
    )
    .map_err(|e| e.message)?;
    Ok(parts(b))
}

/// The one-pass reader on `line`, alone and followed by more text (the same either way); `Some`
/// when it takes the line.
fn fast(line: &str, lineinfo: bool) -> Option<Read> {
    let one = |text: &str| {
        let mut b = open();
        let (f, n) = inst(text.as_bytes(), lineinfo, &mut b)?;
        assert_eq!(n, line.len(), "{line:?}: the line ends where it ends");
        push_inst(f, 5, &mut b, &mut OpCache::default()).ok()?;
        Some(parts(b))
    };
    let alone = one(line);
    if line.ends_with('\n') {
        assert_eq!(
            one(&format!("{line}0100 ffffffff 0 EXIT 0 0\n")),
            alone,
            "{line:?}"
        );
    }
    alone
}

/// Whether the one-pass reader takes `line` (up to and with its first `\n`), having checked that
/// the general reader reads the same from it.
fn agree(line: &str, lineinfo: bool) -> bool {
    let line = match line.find('\n') {
        Some(p) => &line[..=p],
        None => line,
    };
    // A line that `Reader::line` takes as blank is never handed to either decoder.
    if line.trim().is_empty() {
        return false;
    }
    match fast(line, lineinfo) {
        Some(f) => {
            assert_eq!(general(line, lineinfo), Ok(f), "{line:?}");
            true
        }
        None => false,
    }
}

const FORMS: &[&str] = &[
    "0000 ffffffff 1 R0 S2R 0 0",
    "0010 ffffffff 1 R2 IMAD 1 R0 0",
    "0040 ffffffff 1 R4 LDG.E 1 R2 4 1 0x7f0000000000 4",
    "0060 ffffffff 0 STG.E 2 R8 R5 4 1 0x7f1000000000 4",
    "0070 ffffffff 0 RED.E.ADD.STRONG.GPU 2 R10 R6 4 1 0x7f2000000000 -4",
    "00a0 ffffffff 0 BRA 0 0",
    "0100 0000000d 1 R1 LDG.E 1 R2 4 0 0x100 0x108 0x10c",
    "0110 0000000d 1 R1 LDG.E 1 R2 4 2 0x100 8 -4",
    "0120 00000001 2 RZ PT LDG.E.64 3 UR4 UP1 P6 8 0 0xFFFFffffFFFFffff",
    "0130 00000000 1 R3 LDG.E 1 R2 4",
    "0140 80000000 0 ATOMS.ADD 2 R255 UR63 4 2 0x0",
    "0150 ffffffff 1 UPT MEMBAR.GPU 0 0",
    "0160 FFFFFFFF 1 URZ BAR.SYNC 1 UP7 0",
    "0170 ffffffff 1 R9 FOO.BAR 0 16 1 0x10 0",
    "00000000000001f0 00000000ffffffff 000 NOP 00 000",
];

#[test]
fn the_tracers_forms_are_taken_and_read_as_the_general_reader_reads_them() {
    for l in FORMS {
        // A last line without a line end goes to the general reader.
        assert!(!agree(l, false), "{l:?} without a line end");
        for end in ["\n", "\r\n", " \n", "\t \r\n", " 7\n", " 0x1f \n", " imm\n"] {
            let line = format!("{l}{end}");
            assert!(agree(&line, false), "{line:?} is taken");
            assert!(agree(&format!("12 {line}"), true), "{line:?} with lineinfo");
            assert!(agree(&line.replace(' ', "\t"), false), "{line:?} with tabs");
            assert!(
                agree(&line.replace(' ', "  \t "), false),
                "{line:?} with runs"
            );
        }
    }
}

#[test]
fn unusual_lines_are_left_to_the_general_reader() {
    let handed_back = [
        " 0000 ffffffff 1 R0 S2R 0 0\n",
        "\u{a0}0000 ffffffff 1 R0 S2R 0 0\n",
        "0000 ffffffff 1 R0 S2R 0 0\r",
        "0000 ffffffff 1 R0 S2R 0 0\u{b}\n",
        "0000 ffffffff 1 R0 S2R 0 0\u{c}\n",
        "0000\u{c}ffffffff 1 R0 S2R 0 0\n",
        "0000 ffffffff 1 R0 S2R 0 0\u{a0}\n",
        "0000 ffffffff 1 R0 S2R 0 0 1 2\n",
        "0000 ffffffff 1 R0 S2R 0 0 1 \u{a0}\n",
        "0000 ffffffff +1 R0 S2R 0 0\n",
        "0000 ffffffff 1 R0007 S2R 0 0\n",
        "0000 ffffffff 1 R256 S2R 0 0\n",
        "0000 ffffffff 1 UR64 S2R 0 0\n",
        "0000 ffffffff 1 P8 S2R 0 0\n",
        "0000 ffffffff 1 RZ5 S2R 0 0\n",
        "0000 ffffffff 1 X0 S2R 0 0\n",
        "0000 ffffffff 256 R0 S2R 0 0\n",
        "0000 1ffffffff 1 R0 S2R 0 0\n",
        "00000000000000000 ffffffff 1 R0 S2R 0 0\n",
        "0000 ffffffff 1 R0 s2r 0 0\n",
        "0000 ffffffff 1 R0 S2R 0 1234567890\n",
        "0040 ffffffff 1 R4 LDG.E 1 R2 4 1 0X7f00 4\n",
        "0040 ffffffff 1 R4 LDG.E 1 R2 4 1 7f00 4\n",
        "0040 ffffffff 1 R4 LDG.E 1 R2 4 1 0x00000000000000001 4\n",
        "0040 ffffffff 1 R4 LDG.E 1 R2 4 1 0x7f00 +4\n",
        "0040 ffffffff 1 R4 LDG.E 1 R2 4 1 0x7f00 -9223372036854775808\n",
        "0040 ffffffff 1 R4 LDG.E 1 R2 4 3 0x7f00 4\n",
        "0040 ffffffff 1 R4 LDG.E 1 R2 4 10 0x7f00 4\n",
        "0040 00000003 1 R4 LDG.E 1 R2 4 0 0x7f00\n",
        "0040 00000003 1 R4 LDG.E 1 R2 4 0 0x7f00 0x8 0x9 0xa\n",
        "0040 ffffffff 1 R4 LDG.E 1 R2 4 1 0x7f00\n",
        "#END_TB\n",
        "\n",
    ];
    for l in handed_back {
        assert!(!agree(l, false), "{l:?} is handed back");
    }
}

/// A small xorshift generator: the mutations are the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

#[test]
fn mutated_lines_are_read_alike_or_handed_back() {
    let pieces = [
        " ", "\t", "  ", "\r", "\r\n", "\n", "\u{b}", "\u{c}", "\u{a0}", "\u{3000}", "0", "9", "f",
        "F", "x", "0x", "+", "-", "Z", "T", "R", "UR", "P", "UP", "#", "é", "00000000", "1", "2",
        "3",
    ];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut taken, mut total) = (0, 0);
    for round in 0..40_000 {
        let base = FORMS[round % FORMS.len()];
        let mut line: Vec<char> = base.chars().collect();
        for _ in 0..1 + rng.next(3) {
            let at = rng.next(line.len() + 1);
            match rng.next(3) {
                0 if at < line.len() => {
                    line.remove(at);
                }
                1 if at < line.len() => {
                    let p: Vec<char> = pieces[rng.next(pieces.len())].chars().collect();
                    line.splice(at..at + 1, p);
                }
                _ => {
                    let p: Vec<char> = pieces[rng.next(pieces.len())].chars().collect();
                    line.splice(at..at, p);
                }
            }
        }
        let mut line: String = line.into_iter().collect();
        line.push_str(["\n", "\r\n", ""][rng.next(3)]);
        let lineinfo = rng.next(4) == 0;
        if lineinfo {
            line.insert_str(0, "3 ");
        }
        total += 1;
        taken += agree(&line, lineinfo) as u32;
    }
    // Most single edits break a field; enough survive to exercise the reader on odd spacing.
    assert!(
        taken > total / 10 && taken < total,
        "{taken} of {total} taken"
    );
}

#[test]
fn a_trace_with_crlf_tabs_and_spaces_reads_as_the_plain_one() {
    let s = Synth {
        atomics: SynthAtomics::Distinct,
        iters: 3,
        blocks: 3,
        block_threads: 64,
    };
    let plain = kernel_text(&s);
    // Header and structure lines are trimmed whole; inside instruction lines any run of spaces
    // and tabs separates fields.
    let odd: String = plain
        .lines()
        .enumerate()
        .map(|(i, l)| {
            let inst = l.starts_with(|c: char| c.is_ascii_hexdigit());
            match i % 4 {
                0 => format!("{l}\r\n"),
                1 if inst => format!("{}\t\n", l.replace(' ', "\t")),
                2 => format!("  {l} \n"),
                _ if inst => format!("{}\n", l.replace(' ', " \t  ")),
                _ => format!("{l}\t\r\n"),
            }
        })
        .collect();
    let dir = std::env::temp_dir().join(format!("gpumemsim-scan-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("kernel-1.traceg");
    std::fs::write(&path, &odd).unwrap();
    let a = parse_kernel(&plain, Path::new("k")).unwrap();
    let b = parse_kernel(&odd, Path::new("k")).unwrap();
    let c = load_kernel(&path).unwrap();
    for i in 0..3 {
        let x = a.block(i).unwrap();
        assert_eq!(*x, *b.block(i).unwrap());
        assert_eq!(*x, *c.block(i).unwrap());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn lineinfo_traces_and_errors_after_fast_lines_name_their_line() {
    let head = "-kernel name = k\n-grid dim = (1,1,1)\n-block dim = (32,1,1)\n\
                -accelsim tracer version = 4\n-enable lineinfo = 1\n\
                #BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ninsts = 4\n";
    let good = "17 0000 ffffffff 1 R0 S2R 0 0\n\
                18 0010 ffffffff 1 R4 LDG.E 1 R0 4 1 0x1000 4\n\
                19 0020 00000003 0 STG.E 1 R4 4 2 0x2000 -8\n\
                20 0030 ffffffff 0 EXIT 0 0\n#END_TB\n";
    let k = parse_kernel(&format!("{head}{good}"), Path::new("k")).unwrap();
    let b = k.block(0).unwrap();
    let lines: Vec<u32> = b.insts.iter().map(|i| i.line).collect();
    assert_eq!(lines, [10, 11, 12, 13]);
    assert_eq!(
        b.lane_addrs(&b.insts[2]).collect::<Vec<_>>(),
        [0x2000, 0x1ff8]
    );
    let bad = good.replace(
        "19 0020 00000003 0 STG.E 1 R4 4 2 0x2000 -8",
        "19 0020 00000003 0 STG.E 1 R4 4 2 0x2000 -8 1 2",
    );
    match parse_kernel(&format!("{head}{bad}"), Path::new("k")) {
        Err(TraceError::Syntax { line, message, .. }) => {
            assert_eq!(line, 12);
            assert!(message.contains("unexpected fields"), "{message}");
        }
        other => panic!("{:?}", other.map(|_| ())),
    }
}

#[test]
fn eight_hex_digits_at_once_read_as_one_at_a_time() {
    let one_at_a_time = |w: [u8; 8]| {
        let n = w.iter().take_while(|c| c.is_ascii_hexdigit()).count();
        let s = std::str::from_utf8(&w[..n]).unwrap();
        (n, u64::from_str_radix(s, 16).unwrap_or(0))
    };
    let alphabet = b"0123456789abcdefABCDEFgG/:@`xX \t\n\x7f\x80\xb0\xc6\xe6\xff";
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    for _ in 0..200_000 {
        let mut w = [0u8; 8];
        let digits = rng.next(9);
        for (k, c) in w.iter_mut().enumerate() {
            *c = if k < digits {
                b"0123456789abcdefABCDEF"[rng.next(22)]
            } else if rng.next(2) == 0 {
                alphabet[rng.next(alphabet.len())]
            } else {
                rng.next(256) as u8
            };
        }
        assert_eq!(hex8(u64::from_le_bytes(w)), one_at_a_time(w), "{w:?}");
    }
    for b in 0..=255u8 {
        let w = [b; 8];
        assert_eq!(hex8(u64::from_le_bytes(w)), one_at_a_time(w), "{w:?}");
    }
}
