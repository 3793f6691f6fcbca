//! The outside world behind traits: each partner of the service (the credit bureau, the card
//! processor, ...) is a trait with a realistic simulator that the sandbox (and the tests) use.

pub mod credit;
pub mod payments;
