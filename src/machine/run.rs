//! The resumable parsing machine: runs a [`Program`] from an entry rule over input
//! that arrives in pieces, and stops with "need more" when the bytes run out.

use super::program::{Addr, Inst, Program, RuleId};

/// A rule matched over `start..end` (byte offsets into the unit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capture {
    /// The rule.
    pub rule: RuleId,
    /// Where its match starts.
    pub start: usize,
    /// Where its match ends.
    pub end: usize,
}

impl Capture {
    /// Whether the rule's match has ended (during a run, the captures of the rules
    /// being matched are still open).
    pub fn is_closed(&self) -> bool {
        self.end != OPEN
    }
}

/// Where a run stands after [`ParsingMachine::resume`] or [`ParsingMachine::finish`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The outcome depends on bytes that have not arrived: every byte so far is
    /// consistent with a match.
    NeedMore,
    /// The entry rule matched the first `end` bytes; [`ParsingMachine::captures`]
    /// holds the captured rules.
    Matched {
        /// Where the match ends.
        end: usize,
    },
    /// The entry rule cannot match.
    Rejected {
        /// The furthest position the machine looked at before giving up.
        furthest: usize,
    },
    /// The input nests deeper than the machine's depth bound (calls, choices and
    /// predicates pending at once): rejected, not overflowed.
    TooDeep {
        /// Where the bound was reached.
        at: usize,
    },
}

/// A pending alternative or a return address.
#[derive(Clone, Copy, Debug)]
enum Frame {
    Choice {
        alt: Addr,
        pos: usize,
        caps: usize,
    },
    /// `slot` is the nesting slot of a bounded call, or [`NO_SLOT`].
    Call {
        ret: Addr,
        slot: u16,
    },
}

/// The slot of a call without a nesting bound.
const NO_SLOT: u16 = u16::MAX;

/// Marks a capture that is still open.
const OPEN: usize = usize::MAX;

/// How many bytes a `SpanUntil` looks at one by one before it calls memchr.
const SHORT_SPAN: usize = 16;

/// The default bound on pending calls, choices and predicates.
pub const DEFAULT_DEPTH: usize = 1024;

/// A resumable run of a [`Program`].
///
/// [`start`](Self::start) an entry rule, then call [`resume`](Self::resume) with the
/// unit's bytes so far each time more arrive (always the same bytes, extended), and
/// [`finish`](Self::finish) when the input ends. The machine keeps its instruction
/// pointer, position, backtrack stack and captures between calls and continues
/// where it stopped; nothing is re-run from the start. Stacks and the capture list
/// are reused across starts.
#[derive(Clone, Debug)]
pub struct ParsingMachine<'p> {
    program: &'p Program,
    ip: Addr,
    pos: usize,
    furthest: usize,
    stack: Vec<Frame>,
    captures: Vec<Capture>,
    /// Bit per rule: whether its captures are recorded.
    wanted: Vec<u64>,
    /// Whether every rule's captures are recorded (no [`Self::capture_only`]), so
    /// the bits need no test.
    all_wanted: bool,
    /// Per nesting slot: how many bounded calls of it are pending.
    nesting: Vec<u32>,
    depth: usize,
    done: Option<Outcome>,
}

impl<'p> ParsingMachine<'p> {
    /// A machine for `program` that records the captures of every rule.
    pub fn new(program: &'p Program) -> Self {
        let words = program.names.len().div_ceil(64);
        ParsingMachine {
            program,
            ip: 0,
            pos: 0,
            furthest: 0,
            stack: Vec::new(),
            captures: Vec::new(),
            wanted: vec![u64::MAX; words],
            all_wanted: true,
            nesting: vec![0; program.bounds.len()],
            depth: DEFAULT_DEPTH,
            done: Some(Outcome::Rejected { furthest: 0 }),
        }
    }

    /// Records the captures of these rules only.
    pub fn capture_only(&mut self, rules: &[RuleId]) {
        self.all_wanted = false;
        self.wanted.iter_mut().for_each(|w| *w = 0);
        for r in rules {
            self.wanted[r.index() / 64] |= 1 << (r.index() % 64);
        }
    }

    /// Sets the bound on pending calls, choices and predicates.
    pub fn set_depth_limit(&mut self, depth: usize) {
        self.depth = depth;
    }

    /// The program this machine runs.
    pub fn program(&self) -> &'p Program {
        self.program
    }

    /// Starts a run of `rule` on a new unit.
    pub fn start(&mut self, rule: RuleId) {
        self.ip = self.program.entries[rule.index()];
        self.pos = 0;
        self.furthest = 0;
        self.stack.clear();
        self.captures.clear();
        if !self.nesting.is_empty() {
            self.nesting.fill(0);
        }
        self.done = None;
    }

    /// The captures recorded so far: after `Matched`, every capture of the match in
    /// the order the rules started (pest's pair order); after `NeedMore`, the ones on
    /// the path taken so far (a later byte may still undo them).
    pub fn captures(&self) -> &[Capture] {
        &self.captures
    }

    /// Continues the run over `input`, the unit's bytes so far (a prefix of the input
    /// may never change between calls). More input may follow.
    pub fn resume(&mut self, input: &[u8]) -> Outcome {
        self.run(input, false)
    }

    /// Continues the run over `input`, the whole unit: the input ends here, so the
    /// outcome is `Matched`, `Rejected` or `TooDeep`.
    pub fn finish(&mut self, input: &[u8]) -> Outcome {
        self.run(input, true)
    }

    #[inline(always)]
    fn wants(&self, rule: RuleId) -> bool {
        self.all_wanted || (self.wanted[rule.index() / 64] >> (rule.index() % 64)) & 1 == 1
    }

    fn run(&mut self, input: &[u8], eof: bool) -> Outcome {
        if let Some(done) = self.done {
            return done;
        }
        let program = self.program;
        let code = &program.code[..];
        let sets = &program.sets[..];
        let len = input.len();
        let mut ip = self.ip as usize;
        let mut pos = self.pos;
        // The loop below leaves through `'more` (stop before the instruction at `ip`
        // when input may still come) or `'fail` (backtrack to the latest choice), so
        // that each of those paths exists once and the step loop stays small.
        loop {
            'fail: {
                'more: {
                    loop {
                        match code[ip] {
                            Inst::Byte(b) => match input.get(pos) {
                                Some(&c) if c == b => {
                                    pos += 1;
                                    ip += 1;
                                }
                                Some(_) => break 'fail,
                                None => break 'more,
                            },
                            Inst::Literal { at, len: n } => {
                                let lit = &program.literals[at as usize..(at + n) as usize];
                                if input.get(pos..pos + lit.len()) == Some(lit) {
                                    pos += lit.len();
                                    ip += 1;
                                    continue;
                                }
                                let have = &input[pos..len.min(pos + lit.len())];
                                if let Some(k) = have.iter().zip(lit).position(|(a, b)| a != b) {
                                    self.furthest = self.furthest.max(pos + k);
                                    break 'fail;
                                }
                                break 'more;
                            }
                            Inst::LiteralInsens { at, len: n } => {
                                let lit = &program.literals[at as usize..(at + n) as usize];
                                let have = &input[pos..len.min(pos + lit.len())];
                                if let Some(k) = have
                                    .iter()
                                    .zip(lit)
                                    .position(|(a, b)| !a.eq_ignore_ascii_case(b))
                                {
                                    self.furthest = self.furthest.max(pos + k);
                                    break 'fail;
                                }
                                if have.len() < lit.len() {
                                    break 'more;
                                }
                                pos += lit.len();
                                ip += 1;
                            }
                            Inst::Set(s) => match input.get(pos) {
                                Some(&c) if sets[s as usize].contains(c) => {
                                    pos += 1;
                                    ip += 1;
                                }
                                Some(_) => break 'fail,
                                None => break 'more,
                            },
                            Inst::Char(s) => match input.get(pos) {
                                Some(&c) if sets[s as usize].contains(c) => {
                                    let n = char_len(c);
                                    if pos + n > len {
                                        break 'more;
                                    }
                                    pos += n;
                                    ip += 1;
                                }
                                Some(_) => break 'fail,
                                None => break 'more,
                            },
                            Inst::Span(s) => {
                                let set = &sets[s as usize];
                                while pos < len && set.contains(input[pos]) {
                                    pos += 1;
                                }
                                if pos == len {
                                    if !eof {
                                        break 'more;
                                    }
                                    self.furthest = self.furthest.max(pos);
                                }
                                ip += 1;
                            }
                            Inst::ByteSpan { byte, set: s } => match input.get(pos) {
                                Some(&c) if c == byte => {
                                    pos += 1;
                                    let set = &sets[s as usize];
                                    while pos < len && set.contains(input[pos]) {
                                        pos += 1;
                                    }
                                    if pos == len {
                                        if !eof {
                                            // Stop in the `Span` after this instruction.
                                            ip += 1;
                                            break 'more;
                                        }
                                        self.furthest = self.furthest.max(pos);
                                    }
                                    ip += 2;
                                }
                                Some(_) => break 'fail,
                                None => break 'more,
                            },
                            Inst::SpanPlus(s) => {
                                let set = &sets[s as usize];
                                match input.get(pos) {
                                    Some(&c) if set.contains(c) => {
                                        pos += 1;
                                        while pos < len && set.contains(input[pos]) {
                                            pos += 1;
                                        }
                                        if pos == len {
                                            if !eof {
                                                // Stop in the `Span` after this instruction.
                                                ip += 1;
                                                break 'more;
                                            }
                                            self.furthest = self.furthest.max(pos);
                                        }
                                        ip += 2;
                                    }
                                    Some(_) => break 'fail,
                                    None => break 'more,
                                }
                            }
                            Inst::CaptureSpanPlus { rule, set: s } => {
                                let set = &sets[s as usize];
                                match input.get(pos) {
                                    Some(&c) if set.contains(c) => {
                                        let start = pos;
                                        pos += 1;
                                        while pos < len && set.contains(input[pos]) {
                                            pos += 1;
                                        }
                                        let wanted = self.wants(rule);
                                        let mut end = pos;
                                        if pos == len {
                                            if !eof {
                                                // Left open; stop in the `Span`, whose
                                                // `Close` follows.
                                                end = OPEN;
                                            } else {
                                                self.furthest = self.furthest.max(pos);
                                            }
                                        }
                                        if wanted {
                                            self.captures.push(Capture { rule, start, end });
                                        }
                                        if end == OPEN {
                                            ip += 2;
                                            break 'more;
                                        }
                                        ip += 4;
                                    }
                                    Some(_) => break 'fail,
                                    None => break 'more,
                                }
                            }
                            Inst::SpanUntil { stops, n } => {
                                let rest = &input[pos..];
                                // Most spans (a name, a short string) end within a few
                                // bytes: look at those before paying memchr's setup.
                                // `stops` repeats its first byte past `n`, so testing
                                // all three is testing the `n`.
                                let head = rest.len().min(SHORT_SPAN);
                                let found = match rest[..head]
                                    .iter()
                                    .position(|&b| b == stops[0] || b == stops[1] || b == stops[2])
                                {
                                    Some(k) => Some(k),
                                    None if head == rest.len() => None,
                                    None => {
                                        let tail = &rest[head..];
                                        match n {
                                            1 => memchr::memchr(stops[0], tail),
                                            2 => memchr::memchr2(stops[0], stops[1], tail),
                                            _ => {
                                                memchr::memchr3(stops[0], stops[1], stops[2], tail)
                                            }
                                        }
                                        .map(|k| head + k)
                                    }
                                };
                                match found {
                                    Some(k) => pos += k,
                                    None => {
                                        pos = len;
                                        if !eof {
                                            break 'more;
                                        }
                                        self.furthest = self.furthest.max(pos);
                                    }
                                }
                                ip += 1;
                            }
                            Inst::TestSet { set, miss } => match input.get(pos) {
                                Some(&c) if sets[set as usize].contains(c) => ip += 1,
                                Some(_) => ip = miss as usize,
                                None if eof => ip = miss as usize,
                                None => break 'more,
                            },
                            Inst::TestChoice { set, alt } => match input.get(pos) {
                                Some(&c) if sets[set as usize].contains(c) => {
                                    if self.stack.len() >= self.depth {
                                        return self.too_deep(pos);
                                    }
                                    self.stack.push(Frame::Choice {
                                        alt,
                                        pos,
                                        caps: self.captures.len(),
                                    });
                                    ip += 2;
                                }
                                Some(_) => ip = alt as usize,
                                None if eof => ip = alt as usize,
                                None => break 'more,
                            },
                            Inst::SetOr { set, miss } => match input.get(pos) {
                                Some(&c) if sets[set as usize].contains(c) => {
                                    pos += 1;
                                    ip += 1;
                                }
                                Some(_) => ip = miss as usize,
                                None if eof => ip = miss as usize,
                                None => break 'more,
                            },
                            Inst::CharOr { set, miss } => match input.get(pos) {
                                Some(&c) if sets[set as usize].contains(c) => {
                                    let n = char_len(c);
                                    if pos + n <= len {
                                        pos += n;
                                        ip += 1;
                                    } else if eof {
                                        // As the backtrack of `e?` would record it.
                                        self.furthest = self.furthest.max(pos);
                                        ip = miss as usize;
                                    } else {
                                        break 'more;
                                    }
                                }
                                Some(_) => ip = miss as usize,
                                None if eof => ip = miss as usize,
                                None => break 'more,
                            },
                            Inst::Choice(alt) => {
                                if self.stack.len() >= self.depth {
                                    return self.too_deep(pos);
                                }
                                self.stack.push(Frame::Choice {
                                    alt,
                                    pos,
                                    caps: self.captures.len(),
                                });
                                ip += 1;
                            }
                            Inst::Commit(to) => {
                                self.stack.pop();
                                ip = to as usize;
                            }
                            Inst::PartialCommit(to) => {
                                if let Some(Frame::Choice { pos: p, caps, .. }) =
                                    self.stack.last_mut()
                                {
                                    *p = pos;
                                    *caps = self.captures.len();
                                }
                                ip = to as usize;
                            }
                            Inst::BackCommit(to) => {
                                if let Some(Frame::Choice { pos: p, caps, .. }) = self.stack.pop() {
                                    pos = p;
                                    self.captures.truncate(caps);
                                }
                                ip = to as usize;
                            }
                            Inst::FailTwice => {
                                self.stack.pop();
                                break 'fail;
                            }
                            Inst::Fail => break 'fail,
                            Inst::Call(to) => {
                                if self.stack.len() >= self.depth {
                                    return self.too_deep(pos);
                                }
                                self.stack.push(Frame::Call {
                                    ret: ip as Addr + 1,
                                    slot: NO_SLOT,
                                });
                                ip = to as usize;
                            }
                            Inst::CallBounded { to, slot } => {
                                let pending = self.nesting[slot as usize];
                                if pending >= program.bounds[slot as usize] {
                                    break 'fail;
                                }
                                if self.stack.len() >= self.depth {
                                    return self.too_deep(pos);
                                }
                                self.stack.push(Frame::Call {
                                    ret: ip as Addr + 1,
                                    slot,
                                });
                                self.nesting[slot as usize] = pending + 1;
                                ip = to as usize;
                            }
                            Inst::Return => match self.stack.pop() {
                                Some(Frame::Call { ret, slot }) => {
                                    if slot != NO_SLOT {
                                        self.nesting[slot as usize] -= 1;
                                    }
                                    ip = ret as usize;
                                }
                                // The entry rule's own subroutine returned: the run matched.
                                None => return self.matched(pos),
                                // The compiler pairs every return with its call.
                                _ => break 'fail,
                            },
                            Inst::Open(rule) => {
                                if self.wants(rule) {
                                    self.captures.push(Capture {
                                        rule,
                                        start: pos,
                                        end: OPEN,
                                    });
                                }
                                ip += 1;
                            }
                            Inst::Close(rule) => {
                                if self.wants(rule) {
                                    // Captures after the open one are its children, all closed.
                                    if let Some(c) =
                                        self.captures.iter_mut().rev().find(|c| c.end == OPEN)
                                    {
                                        c.end = pos;
                                    }
                                }
                                ip += 1;
                            }
                            Inst::Soi => {
                                if pos != 0 {
                                    break 'fail;
                                }
                                ip += 1;
                            }
                            Inst::Eoi => {
                                if pos < len {
                                    break 'fail;
                                }
                                if !eof {
                                    break 'more;
                                }
                                ip += 1;
                            }
                            Inst::End => return self.matched(pos),
                        }
                    }
                }
                // Need more: stop before the instruction at `ip`, unless the input
                // has ended (then the instruction fails).
                if !eof {
                    self.ip = ip as Addr;
                    self.pos = pos;
                    self.furthest = self.furthest.max(pos);
                    return Outcome::NeedMore;
                }
            }
            // Fail: backtrack to the latest choice, or end the run rejected.
            if pos > self.furthest {
                self.furthest = pos;
            }
            loop {
                match self.stack.pop() {
                    None => {
                        let outcome = Outcome::Rejected {
                            furthest: self.furthest,
                        };
                        self.done = Some(outcome);
                        return outcome;
                    }
                    Some(Frame::Call { slot, .. }) => {
                        if slot != NO_SLOT {
                            self.nesting[slot as usize] -= 1;
                        }
                    }
                    Some(Frame::Choice { alt, pos: p, caps }) => {
                        pos = p;
                        self.captures.truncate(caps);
                        ip = alt as usize;
                        break;
                    }
                }
            }
        }
    }

    /// Ends the run matched at `pos`.
    #[cold]
    fn matched(&mut self, pos: usize) -> Outcome {
        self.furthest = self.furthest.max(pos);
        let outcome = Outcome::Matched { end: pos };
        self.done = Some(outcome);
        outcome
    }

    /// Ends the run: the depth bound is reached at `pos`.
    #[cold]
    fn too_deep(&mut self, pos: usize) -> Outcome {
        let outcome = Outcome::TooDeep { at: pos };
        self.done = Some(outcome);
        outcome
    }
}

/// The length of the UTF-8 sequence `lead` starts (1 for a byte that cannot lead one,
/// which valid input never has at a character boundary).
#[inline(always)]
fn char_len(lead: u8) -> usize {
    match lead {
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xFF => 4,
        _ => 1,
    }
}
