//! Background work and time: the clock every time-dependent rule reads.

pub mod clock;
