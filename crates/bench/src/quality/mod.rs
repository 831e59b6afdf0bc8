//! `copytrace-bench quality`: detection quality on real text.

pub mod corpus;
