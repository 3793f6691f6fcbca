//! Document generation: invoices as PDF (later EFL, TOS, YRAC, LOA, renewal notices), rendered
//! from plain data so that the callers decide what is printed and this module only how.

pub mod invoice;
