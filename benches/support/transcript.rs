//! Generated transcripts: a long human-assistant prompt, and a model continuation
//! for the stop scanner.

use super::{sentence, Rng};

/// A human-assistant prompt of about `size` bytes, ending in an open Assistant turn.
pub fn transcript_prompt(size: usize, seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let mut out = String::with_capacity(size + 4096);
    let mut human = true;
    while out.len() < size {
        out.push_str(if human {
            "\n\nHuman: "
        } else {
            "\n\nAssistant: "
        });
        for _ in 0..(1 + rng.below(6)) {
            sentence(&mut rng, &mut out);
            if rng.below(4) == 0 {
                out.push('\n');
            }
        }
        human = !human;
    }
    if human {
        out.push_str("\n\nHuman: thanks.");
    }
    out.push_str("\n\nAssistant:");
    out
}

/// A model continuation of about `size` bytes with near-misses of the stop
/// sequences (`\nUser` without a colon, `\n\nHum`) and no real stop until the end.
pub fn transcript_continuation(size: usize, seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let mut out = String::with_capacity(size + 64);
    while out.len() < size {
        sentence(&mut rng, &mut out);
        match rng.below(6) {
            0 => out.push_str("\nUser said "),
            1 => out.push_str("\n\nHum "),
            2 => out.push('\n'),
            _ => {}
        }
    }
    out.push_str("\nUser: next turn");
    out
}
