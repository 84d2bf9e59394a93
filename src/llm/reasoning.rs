//! From the user's thinking setting and what the catalog says a model can do, to what a
//! request asks for. Pure; the clients put the answer on their wire.

use super::request::{Effort, Reasoning};
use crate::config::{MIN_THINKING_BUDGET, ThinkingSetting, ThinkingSupport};

/// Budgets the words stand for on models that take a budget (Claude Code's "think",
/// "think hard" and "ultrathink" are 4k, 10k and 32k).
const LOW_BUDGET: u32 = 4_000;
const MEDIUM_BUDGET: u32 = 12_000;
const HIGH_BUDGET: u32 = 32_000;
/// Budgets at or above these read as medium and high effort on models that take an effort.
const MEDIUM_FROM: u32 = 8_000;
const HIGH_FROM: u32 = 24_000;
/// Without interleaving, the budget must leave this much of `max_tokens` for the answer.
const ANSWER_ROOM: u32 = 1_024;

/// What a request to a model with `support` asks for, given the user's `setting` (unset: the
/// model's default) and the request's `max_tokens`. `None` for a model that does not think.
pub fn reasoning_for(setting: Option<ThinkingSetting>, support: ThinkingSupport, max_tokens: u32) -> Option<Reasoning> {
    if support == ThinkingSupport::None {
        return None;
    }
    let Some(setting) = setting else { return Some(Reasoning::Default) };
    let budget = match setting {
        ThinkingSetting::Off => None,
        ThinkingSetting::Low => Some(LOW_BUDGET),
        ThinkingSetting::Medium => Some(MEDIUM_BUDGET),
        ThinkingSetting::High => Some(HIGH_BUDGET),
        ThinkingSetting::Budget(n) => Some(n),
    };
    let effort = |tokens: u32| match setting {
        ThinkingSetting::Low => Effort::Low,
        ThinkingSetting::Medium => Effort::Medium,
        ThinkingSetting::High => Effort::High,
        ThinkingSetting::Off | ThinkingSetting::Budget(_) if tokens >= HIGH_FROM => Effort::High,
        ThinkingSetting::Off | ThinkingSetting::Budget(_) if tokens >= MEDIUM_FROM => Effort::Medium,
        ThinkingSetting::Off | ThinkingSetting::Budget(_) => Effort::Low,
    };
    match (support, budget) {
        (ThinkingSupport::None, _) => None,
        // Thinking with a budget is off unless asked for; OpenAI's reasoning models always
        // reason and an always-on model cannot stop: off leaves them at their default.
        (ThinkingSupport::Budget | ThinkingSupport::BudgetInterleaved | ThinkingSupport::Effort, None) => {
            Some(Reasoning::Default)
        }
        (ThinkingSupport::AdaptiveAlways, None) => Some(Reasoning::Default),
        (ThinkingSupport::Adaptive, None) => Some(Reasoning::Off),
        (ThinkingSupport::BudgetInterleaved, Some(tokens)) => {
            Some(Reasoning::Budget { tokens: tokens.max(MIN_THINKING_BUDGET), interleaved: true })
        }
        (ThinkingSupport::Budget, Some(tokens)) => {
            // The budget is part of max_tokens here: what does not fit is not asked for.
            let room = max_tokens.saturating_sub(ANSWER_ROOM);
            Some(if room >= MIN_THINKING_BUDGET {
                Reasoning::Budget { tokens: tokens.clamp(MIN_THINKING_BUDGET, room), interleaved: false }
            } else {
                Reasoning::Default
            })
        }
        (ThinkingSupport::Adaptive | ThinkingSupport::AdaptiveAlways, Some(tokens)) => {
            Some(Reasoning::Adaptive(effort(tokens)))
        }
        (ThinkingSupport::Effort, Some(tokens)) => Some(Reasoning::Effort(effort(tokens))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_become_budgets_or_efforts_as_the_model_takes_them() {
        let high = Some(ThinkingSetting::High);
        assert_eq!(
            reasoning_for(high, ThinkingSupport::BudgetInterleaved, 16_000),
            Some(Reasoning::Budget { tokens: 32_000, interleaved: true }),
            "interleaved thinking may exceed max_tokens"
        );
        assert_eq!(
            reasoning_for(high, ThinkingSupport::Budget, 16_000),
            Some(Reasoning::Budget { tokens: 14_976, interleaved: false }),
            "otherwise it leaves room for the answer"
        );
        assert_eq!(reasoning_for(high, ThinkingSupport::Budget, 1_500), Some(Reasoning::Default), "no room to think");
        assert_eq!(reasoning_for(high, ThinkingSupport::Adaptive, 16_000), Some(Reasoning::Adaptive(Effort::High)));
        assert_eq!(
            reasoning_for(Some(ThinkingSetting::Budget(10_000)), ThinkingSupport::Effort, 16_000),
            Some(Reasoning::Effort(Effort::Medium))
        );
        assert_eq!(reasoning_for(high, ThinkingSupport::None, 16_000), None);
    }

    #[test]
    fn off_turns_off_only_what_can_be_turned_off_and_unset_asks_nothing() {
        let off = Some(ThinkingSetting::Off);
        assert_eq!(reasoning_for(off, ThinkingSupport::Adaptive, 16_000), Some(Reasoning::Off));
        assert_eq!(reasoning_for(off, ThinkingSupport::AdaptiveAlways, 16_000), Some(Reasoning::Default));
        assert_eq!(reasoning_for(off, ThinkingSupport::BudgetInterleaved, 16_000), Some(Reasoning::Default));
        assert_eq!(reasoning_for(None, ThinkingSupport::Adaptive, 16_000), Some(Reasoning::Default));
        assert_eq!(reasoning_for(None, ThinkingSupport::None, 16_000), None);
    }
}
