//! `cairn report --since DATE`: what every project cost, day by day, for the spend chart and
//! its table. Sums the stored usage and prices each model's part as `cairn usage` does.

use serde::Serialize;

use super::model::add_cost;
use crate::config::Pricing;
use crate::store::{Store, StoreError};

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ProjectSpend {
    pub root: String,
    pub cost_usd: Option<f64>,
    pub requests: u64,
    /// Prompt tokens (uncached, read and written) and output tokens.
    pub prompt_tokens: u64,
    pub output_tokens: u64,
    pub sessions: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SpendDay {
    /// `YYYY-MM-DD`, local time.
    pub date: String,
    pub projects: Vec<ProjectSpend>,
}

impl SpendDay {
    pub fn cost(&self) -> Option<f64> {
        self.projects.iter().fold(None, |sum, p| add_cost(sum, p.cost_usd))
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SpendReport {
    /// The first day: the query's start (RFC 3339) until the caller names it as given.
    pub since: String,
    /// Oldest first.
    pub days: Vec<SpendDay>,
    /// Every project over the whole span, the most expensive first.
    pub projects: Vec<ProjectSpend>,
}

fn add(to: &mut ProjectSpend, row: &crate::store::DailyUsage, cost: Option<f64>, new_session: bool) {
    to.cost_usd = add_cost(to.cost_usd, cost);
    to.requests += row.requests;
    to.prompt_tokens += row.usage.prompt_tokens();
    to.output_tokens += row.usage.output_tokens;
    to.sessions += u64::from(new_session);
}

/// Usage since `since` (RFC 3339) of every project.
pub fn gather_spend(store: &Store, since: &str, pricing: &Pricing) -> Result<SpendReport, StoreError> {
    let rows = store.daily_usage(since)?;
    let mut days: Vec<SpendDay> = Vec::new();
    let mut projects: Vec<ProjectSpend> = Vec::new();
    let mut seen_day: std::collections::HashSet<(String, String)> = Default::default();
    let mut seen: std::collections::HashSet<String> = Default::default();
    for row in &rows {
        let cost = pricing.cost(&row.model, &row.usage);
        let day = match days.iter_mut().position(|d| d.date == row.date) {
            Some(i) => &mut days[i],
            None => {
                days.push(SpendDay { date: row.date.clone(), projects: Vec::new() });
                let last = days.len() - 1;
                &mut days[last]
            }
        };
        let first_today = seen_day.insert((row.date.clone(), row.session_id.clone()));
        match day.projects.iter_mut().find(|p| p.root == row.project_root) {
            Some(p) => add(p, row, cost, first_today),
            None => {
                let mut p = ProjectSpend { root: row.project_root.clone(), ..ProjectSpend::default() };
                add(&mut p, row, cost, first_today);
                day.projects.push(p);
            }
        }
        let first = seen.insert(row.session_id.clone());
        match projects.iter_mut().find(|p| p.root == row.project_root) {
            Some(p) => add(p, row, cost, first),
            None => {
                let mut p = ProjectSpend { root: row.project_root.clone(), ..ProjectSpend::default() };
                add(&mut p, row, cost, first);
                projects.push(p);
            }
        }
    }
    days.sort_by(|a, b| a.date.cmp(&b.date));
    projects.sort_by(|a, b| b.cost_usd.unwrap_or(0.0).total_cmp(&a.cost_usd.unwrap_or(0.0)).then(a.root.cmp(&b.root)));
    Ok(SpendReport { since: since.to_string(), days, projects })
}
