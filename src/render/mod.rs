//! `worksheet render`: timeline pictures of any case file — fixtures, captures, lab output.
//!
//! A case is first laid out ([`layout::layout`] into the drawing types of [`model`]: one panel per clock, lanes per stream, bars,
//! ticks, wait arrows, and the engine's answers placed on the clocks by [`answers`]), then
//! drawn by a pure renderer that returns a `String`: [`svg::render`] for a picture,
//! [`text::render`] for a terminal sketch; [`png::svg_to_png`] rasterises the SVG. Lanes
//! with more items than pixels are drawn as exact per-column density ([`density`]); labels
//! are measured with the embedded font ([`font`]). Only the command (`cmd::render`) touches files (through
//! [`crate::output`]).
//!
//! Two clocks never share an axis: each clock is its own panel with its own axis and unit
//! caption, and an arrow from a wait on one clock to work on another shows what the wait
//! covers, not a time relation.

pub mod answers;
pub mod axes;
pub mod axis;
pub mod density;
pub(crate) mod draw;
pub mod font;
pub mod labels;
pub mod layout;
pub mod model;
pub mod png;
pub mod svg;
pub mod text;
pub mod view;
