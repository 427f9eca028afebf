//! The folded kindaxml document: `{"text", "segments", "markers"}` (KX-22).
//!
//! Segments are maintained as events arrive. An annotation event cuts the segment
//! holding its start and the one holding its end (found by binary search) and joins
//! the segments in between. An annotation reaches back at most past the
//! `max_retro_overlap` recognized tags before it on its line (KX-18), so it touches a
//! bounded number of recent segments, and the whole fold is linear: no loop over all
//! spans at any boundary.

use compact_str::CompactString;
use schemars::JsonSchema;
use serde::Serialize;

use super::attrs::Attrs;
use super::event::{Event, Recovery};
use std::io;

use crate::fold::{write_json_dyn, Fold, Layout};

/// One annotation: a tag and its attributes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Annotation {
    /// The tag as configured.
    #[schemars(with = "String")]
    pub tag: CompactString,
    /// Its attributes, in source order.
    #[schemars(with = "indexmap::IndexMap<String, super::AttrValue>")]
    pub attrs: Attrs,
    /// How its span was chosen (only with `recovery_metadata`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Recovery")]
    pub recovery: Option<Recovery>,
}

/// A run of output text with the annotations covering all of it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Segment {
    /// The text.
    pub text: String,
    /// The annotations covering it, in the order they were decided.
    pub annotations: Vec<Annotation>,
}

/// A zero-width annotation at a position of the output text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Marker {
    /// Byte offset into the output text.
    pub pos: usize,
    /// The annotation.
    pub annotation: Annotation,
}

/// The document of the kindaxml dialect.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Document {
    /// The output text: the input without its markup.
    pub text: String,
    /// The output text cut wherever the set of covering annotations changes.
    pub segments: Vec<Segment>,
    /// Zero-width annotations, in order.
    pub markers: Vec<Marker>,
}

impl Document {
    /// Folds a whole event sequence.
    pub fn fold(events: &[Event]) -> Document {
        let mut folder = DocumentFolder::new();
        for event in events {
            folder.push(event);
        }
        folder.into_document()
    }
}

/// Builds a [`Document`] one event at a time.
#[derive(Clone, Debug, Default)]
pub struct DocumentFolder {
    document: Document,
    /// Output offset of each segment's first byte.
    starts: Vec<usize>,
    /// Output offset right after the last newline of the output text.
    line_start: usize,
    /// The line start when the tag that is still open was read (KX-18: its retro
    /// span cannot start earlier, nor its forward span, which starts at the tag).
    open_line_start: Option<usize>,
    /// Segments before this index may be hollow: their text was released
    /// ([`Fold::release_settled`]) and is read from the output text instead.
    released: usize,
    /// Every segment is hollow from the start ([`DocumentFolder::hollow`]).
    hollow: bool,
}

impl DocumentFolder {
    /// An empty folder.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty folder whose output text will take about `text` bytes.
    pub(crate) fn with_text_capacity(text: usize) -> Self {
        let mut folder = Self::default();
        folder.document.text.reserve(text);
        folder
    }

    /// The same folder, but its segments hold no text of their own while they
    /// are in it: a segment's text is read from the output text when it leaves
    /// ([`DocumentFolder::take_settled`], [`DocumentFolder::take_settled_texts`],
    /// [`DocumentFolder::into_document`]), once, instead of being copied as
    /// text arrives and copied again wherever an annotation cuts it. For a
    /// caller that takes segments out as they settle and needs their text only
    /// for a moment ([`DocumentFolder::take_settled_texts`]); the document is
    /// the same. Meanwhile [`Fold::document`] shows the segments without their
    /// text, as it shows released ones. The segments folded so far become
    /// hollow too.
    pub fn hollow(mut self) -> Self {
        self.hollow = true;
        for segment in &mut self.document.segments {
            segment.text = String::new();
        }
        self
    }

    /// How many segments, from the first, may be hollow.
    fn hollow_count(&self) -> usize {
        if self.hollow {
            self.document.segments.len()
        } else {
            self.released
        }
    }

    /// The finished document.
    pub fn into_document(mut self) -> Document {
        for i in 0..self.hollow_count() {
            self.refill(i);
        }
        self.document.text.shrink_to_fit();
        self.document
    }

    /// The output range of segment `i`.
    fn range(&self, i: usize) -> std::ops::Range<usize> {
        let end = self
            .starts
            .get(i + 1)
            .copied()
            .unwrap_or(self.document.text.len());
        self.starts[i]..end
    }

    /// Gives a hollow segment its text again. A segment is never empty, so an
    /// empty text means a released one.
    fn refill(&mut self, i: usize) {
        if self.document.segments[i].text.is_empty() {
            let range = self.range(i);
            self.document.segments[i].text = self.document.text[range].to_string();
        }
    }

    /// The index of the segment holding output offset `at`. Most annotations reach
    /// back only a few segments (KX-18), so the search starts from the end. An
    /// offset before the first segment left (see [`DocumentFolder::take_settled`])
    /// gives that segment.
    fn segment_at(&self, at: usize) -> usize {
        let starts = &self.starts;
        for (i, &start) in starts.iter().enumerate().rev().take(4) {
            if start <= at {
                return i;
            }
        }
        starts.partition_point(|&s| s <= at).saturating_sub(1)
    }

    /// How many segments, from the first, no later event can change: those that
    /// end before any later annotation can start. A retro span starts after the
    /// last newline before its tag (KX-18), a forward span at its tag, and the tag
    /// still open was read on a line that started at `open_line_start`.
    fn settled_count(&self) -> usize {
        let bound = self
            .open_line_start
            .map_or(self.line_start, |at| at.min(self.line_start));
        // Segment i is settled when the next one starts at or before the bound.
        self.starts
            .partition_point(|&s| s <= bound)
            .saturating_sub(1)
    }

    /// Takes the segments no later event can change (those
    /// [`Fold::release_settled`] would release) out of the document, in order and
    /// with their text, and hands them to `out`. The folder keeps the rest:
    /// [`Fold::document`] and [`DocumentFolder::into_document`] then hold only
    /// the segments not taken yet, and all the segments taken, in the order taken,
    /// followed by those, are the whole document's `segments` (its `text` and
    /// `markers` are whole). A caller converting a long document can so convert
    /// its segments while the parse goes on; the Python package does.
    pub fn take_settled(&mut self, mut out: impl FnMut(Segment)) {
        let settled = self.settled_count();
        if settled == 0 {
            return;
        }
        for i in 0..self.hollow_count().min(settled) {
            self.refill(i);
        }
        self.released = self.released.saturating_sub(settled);
        self.starts.drain(..settled);
        for segment in self.document.segments.drain(..settled) {
            out(segment);
        }
    }

    /// Takes the segments [`DocumentFolder::take_settled`] would take, but hands
    /// `out` each one's text as a slice of the output text, with its
    /// annotations, instead of a [`Segment`]: a hollow folder
    /// ([`DocumentFolder::hollow`]) so gives its segments out without copying
    /// their text. The slices follow one another in the output text.
    pub fn take_settled_texts(&mut self, mut out: impl FnMut(&str, Vec<Annotation>)) {
        let settled = self.settled_count();
        if settled == 0 {
            return;
        }
        let end = self.starts[settled];
        self.released = self.released.saturating_sub(settled);
        let text = &self.document.text;
        let mut starts = self.starts.drain(..settled).peekable();
        for segment in self.document.segments.drain(..settled) {
            let start = starts.next().unwrap_or(end);
            let next = starts.peek().copied().unwrap_or(end);
            out(&text[start..next], segment.annotations);
        }
    }

    /// Takes the markers folded so far out of the document, in order, and hands
    /// them to `out`. A marker is final once folded (no later event changes it),
    /// so all the markers taken, in the order taken, followed by those left in
    /// [`DocumentFolder::into_document`], are the whole document's `markers`. With
    /// [`DocumentFolder::take_settled`] a caller converting a long document can so
    /// convert both its arrays while the parse goes on.
    pub fn take_markers(&mut self, out: impl FnMut(Marker)) {
        self.document.markers.drain(..).for_each(out);
    }

    fn append_text(&mut self, text: &str) {
        let segments = &mut self.document.segments;
        match segments.last_mut() {
            // A hollow segment's text is its range of the output text, which
            // grows with it.
            Some(last) if last.annotations.is_empty() => {
                if !self.hollow {
                    last.text.push_str(text);
                }
            }
            _ => {
                self.starts.push(self.document.text.len());
                segments.push(Segment {
                    text: if self.hollow {
                        String::new()
                    } else {
                        text.to_string()
                    },
                    annotations: Vec::new(),
                });
            }
        }
        self.document.text.push_str(text);
    }

    /// Makes `at` a segment boundary; returns the index of the segment starting there.
    fn cut(&mut self, at: usize) -> usize {
        let i = self.segment_at(at);
        if self.starts[i] == at {
            return i;
        }
        // In a hollow folder both halves stay hollow. Otherwise: released
        // segments come before any later annotation's start (see
        // `release_settled`); should one be cut all the same, it is refilled
        // first.
        let tail = if self.hollow {
            String::new()
        } else {
            self.refill(i);
            self.document.segments[i]
                .text
                .split_off(at - self.starts[i])
        };
        let annotations = self.document.segments[i].annotations.clone();
        self.document.segments.insert(
            i + 1,
            Segment {
                text: tail,
                annotations,
            },
        );
        self.starts.insert(i + 1, at);
        i + 1
    }

    fn annotate(&mut self, start: usize, end: usize, annotation: Annotation) {
        let end = end.min(self.document.text.len());
        // Segments taken out (`take_settled`) end before any later annotation
        // can start (KX-18); should one reach back into them all the same, it
        // covers only the segments left.
        let start = start.max(self.starts.first().copied().unwrap_or(0));
        if start >= end {
            return;
        }
        let first = self.cut(start);
        let last = if end == self.document.text.len() {
            self.starts.len()
        } else {
            self.cut(end)
        };
        let covered = &mut self.document.segments[first..last];
        if let Some((final_segment, others)) = covered.split_last_mut() {
            for segment in others {
                push_exact(&mut segment.annotations, annotation.clone());
            }
            push_exact(&mut final_segment.annotations, annotation);
        }
    }
}

/// Pushes one annotation, growing the list by exactly one: most segments hold one
/// or two, and a list grown by plain pushes would keep room for four in every
/// segment of a long document.
fn push_exact(annotations: &mut Vec<Annotation>, annotation: Annotation) {
    annotations.reserve_exact(1);
    annotations.push(annotation);
}

impl Fold<Event> for DocumentFolder {
    type Document = Document;

    fn push(&mut self, event: &Event) {
        match event {
            Event::Text { text, pos, .. } => {
                if let Some(nl) = memchr::memrchr(b'\n', text.as_bytes()) {
                    self.line_start = pos + nl + 1;
                }
                self.append_text(text);
            }
            Event::Open { .. } => self.open_line_start = Some(self.line_start),
            Event::Annotation {
                tag,
                attrs,
                start,
                end,
                recovery,
                ..
            } => {
                // One tag is open at a time, and the first decision after its
                // `open` is its own (KX-13).
                self.open_line_start = None;
                let annotation = Annotation {
                    tag: tag.clone(),
                    attrs: attrs.clone(),
                    recovery: *recovery,
                };
                self.annotate(*start, *end, annotation);
            }
            Event::Marker {
                pos,
                tag,
                attrs,
                recovery,
                ..
            } => {
                self.open_line_start = None;
                let annotation = Annotation {
                    tag: tag.clone(),
                    attrs: attrs.clone(),
                    recovery: *recovery,
                };
                self.document.markers.push(Marker {
                    pos: *pos,
                    annotation,
                });
            }
            Event::Markup { .. } => {}
        }
    }

    fn document(&self) -> &Document {
        &self.document
    }

    /// Releases the text of segments that end before any later annotation can
    /// start: a retro span starts after the last newline before its tag (KX-18),
    /// a forward span at its tag, and the tag still open was read on a line that
    /// started at `open_line_start`. Their text stays in the output text.
    fn release_settled(&mut self) {
        let settled = self.settled_count();
        for segment in &mut self.document.segments[self.released.min(settled)..settled] {
            segment.text = String::new();
        }
        self.released = self.released.max(settled);
    }

    fn write_document(&self, out: &mut dyn io::Write, layout: Layout) -> io::Result<()> {
        let view = DocumentView {
            text: &self.document.text,
            segments: SegmentsView(self),
            markers: &self.document.markers,
        };
        write_json_dyn(out, &view, layout)
    }

    fn into_document(self) -> Document {
        DocumentFolder::into_document(self)
    }
}

/// The document as written, with released segments' text read from the output
/// text: the same fields in the same order as [`Document`].
#[derive(Serialize)]
struct DocumentView<'a> {
    text: &'a str,
    segments: SegmentsView<'a>,
    markers: &'a [Marker],
}

struct SegmentsView<'a>(&'a DocumentFolder);

/// A segment as written: the same fields in the same order as [`Segment`].
#[derive(Serialize)]
struct SegmentView<'a> {
    text: &'a str,
    annotations: &'a [Annotation],
}

impl Serialize for SegmentsView<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let folder = self.0;
        let segments = &folder.document.segments;
        let mut seq = serializer.serialize_seq(Some(segments.len()))?;
        for (i, segment) in segments.iter().enumerate() {
            let text = if segment.text.is_empty() {
                &folder.document.text[folder.range(i)]
            } else {
                segment.text.as_str()
            };
            seq.serialize_element(&SegmentView {
                text,
                annotations: &segment.annotations,
            })?;
        }
        seq.end()
    }
}
