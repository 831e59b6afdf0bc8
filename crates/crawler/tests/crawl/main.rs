//! End-to-end crawls against real HTTP servers on 127.0.0.1.

mod helpers;

mod conditional;
mod decoding;
mod failures;
mod frontier;
mod guard;
mod hostile;
mod hostile_pages;
mod links;
mod politeness;
mod render;
mod render_auto;
mod robots;
