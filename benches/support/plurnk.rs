//! Generated plurnk documents: prose between statements of every OP.

use super::{sentence, Rng, CODE};

const STATEMENTS: &[&str] = &[
    "<<FIND(config/**/*.xml)://user[@role='admin']:FIND",
    "<<READ(lang/??.json):$.greeting:READ",
    "<<READ(https://en.wikipedia.org/wiki/Paris?lang=en&x=1#top)<426-465>::READ",
    "<<FIND(log://**/error):/timeout|deadline exceeded/i:FIND",
    "<<SHOW[france]:Paris*:SHOW",
    "<<HIDE[499](sse://feed/x)::HIDE",
    "<<MOVE(known://draft):known://final/answer:MOVE",
    "<<COPY[archive,2026](known://draft):known://archive/2026-05-14/draft:COPY",
    "<<SEND[200]:{\"answer\":\"Paris\",\"confidence\":0.95}:SEND",
    "<<EXEC[node](./):console.log([1, 2, 3].reduce((a, b) => a + b, 0)):EXEC",
];

/// A plurnk document of about `size` bytes: prose, one-line statements of every OP, and
/// multi-line EDIT bodies full of code (colons, `<`, `<<`).
pub fn plurnk_mixed(size: usize, seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let mut out = String::with_capacity(size + 4096);
    while out.len() < size {
        match rng.below(4) {
            0 => {
                for _ in 0..3 {
                    sentence(&mut rng, &mut out);
                }
                out.push('\n');
            }
            1 | 2 => {
                sentence(&mut rng, &mut out);
                out.push_str(rng.pick(STATEMENTS));
                out.push('\n');
            }
            _ => {
                out.push_str("<<EDITx[code](known://src/f.ts)<1-40>:\n");
                for _ in 0..(5 + rng.below(20)) {
                    out.push_str(rng.pick(CODE));
                }
                out.push_str("a <<EDIT(q):quoted:EDIT b\n:EDITx\n");
            }
        }
    }
    out
}
