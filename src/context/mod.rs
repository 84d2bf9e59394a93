//! The context pipeline: what the next request carries, derived from the stored history.
//!
//! Pure: takes data in, returns data and decisions. No network, no database, no clock (callers
//! pass `now`). The LLM call of compaction is passed in as a trait object.

mod budget;
mod estimate;
mod invariant;
mod pairs;

pub use budget::{BudgetLevel, ContextBudget};
pub use estimate::{estimate_message_tokens, estimate_text_tokens};
pub use invariant::{Violation, check_request};
pub use pairs::sanitize_pairs;
