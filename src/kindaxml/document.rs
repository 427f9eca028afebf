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

use super::event::{Event, Recovery};
use super::tag::Attrs;
use crate::fold::Fold;

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

    /// The finished document.
    pub fn into_document(mut self) -> Document {
        self.document.text.shrink_to_fit();
        self.document
    }

    /// The index of the segment holding output offset `at`. Most annotations reach
    /// back only a few segments (KX-18), so the search starts from the end.
    fn segment_at(&self, at: usize) -> usize {
        let starts = &self.starts;
        for (i, &start) in starts.iter().enumerate().rev().take(4) {
            if start <= at {
                return i;
            }
        }
        starts.partition_point(|&s| s <= at) - 1
    }

    fn append_text(&mut self, text: &str) {
        let segments = &mut self.document.segments;
        match segments.last_mut() {
            Some(last) if last.annotations.is_empty() => last.text.push_str(text),
            _ => {
                self.starts.push(self.document.text.len());
                segments.push(Segment {
                    text: text.to_string(),
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
        let segment = &mut self.document.segments[i];
        let tail = segment.text.split_off(at - self.starts[i]);
        let annotations = segment.annotations.clone();
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
                segment.annotations.push(annotation.clone());
            }
            final_segment.annotations.push(annotation);
        }
    }
}

impl Fold<Event> for DocumentFolder {
    type Document = Document;

    fn push(&mut self, event: &Event) {
        match event {
            Event::Text { text, .. } => self.append_text(text),
            Event::Annotation {
                tag,
                attrs,
                start,
                end,
                recovery,
                ..
            } => {
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
            Event::Open { .. } | Event::Markup { .. } => {}
        }
    }

    fn document(&self) -> &Document {
        &self.document
    }

    fn into_document(self) -> Document {
        DocumentFolder::into_document(self)
    }
}
