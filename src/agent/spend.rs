//! What a session costs: each request priced as it is answered (auxiliary calls too, through
//! their tally), and the stored usage priced when a session is loaded. Prices come from the
//! model catalog through [`crate::config::Pricing`] alone.

use crate::config::Pricing;
use crate::conversation::Usage;

/// Two costs together; unknown only when both are (a priced request never turns unknown).
pub(crate) fn add_cost(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
    }
}

pub(super) struct Spend {
    pricing: Pricing,
    session: Option<f64>,
    last_request: Option<f64>,
}

impl Spend {
    pub(super) fn new(pricing: Pricing) -> Spend {
        Spend { pricing, session: None, last_request: None }
    }

    pub(super) fn pricing(&self) -> &Pricing {
        &self.pricing
    }

    /// Start from a stored session's usage, summed per model.
    pub(super) fn load(&mut self, per_model: &[(String, Usage, u64)]) {
        self.session =
            per_model.iter().fold(None, |sum, (model, usage, _)| add_cost(sum, self.pricing.cost(model, usage)));
        self.last_request = None;
    }

    /// An agent request was answered: its cost, counted for the session.
    pub(super) fn request(&mut self, model: &str, usage: &Usage) -> Option<f64> {
        let cost = self.pricing.cost(model, usage);
        self.last_request = cost;
        self.session = add_cost(self.session, cost);
        cost
    }

    /// Auxiliary calls, already priced by their tally.
    pub(super) fn add(&mut self, cost: Option<f64>) {
        self.session = add_cost(self.session, cost);
    }

    pub(super) fn session(&self) -> Option<f64> {
        self.session
    }

    pub(super) fn last_request(&self) -> Option<f64> {
        self.last_request
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_costs_the_sum_of_its_priced_requests() {
        let mut spend = Spend::new(Pricing::default());
        let usage = Usage { input_tokens: 1_000_000, ..Usage::default() };
        assert_eq!(spend.request("llama3.2", &usage), None);
        assert_eq!(spend.session(), None, "local models show tokens only");
        assert_eq!(spend.request("claude-sonnet-4-5", &usage), Some(3.0));
        spend.add(Some(0.5));
        assert_eq!(spend.session(), Some(3.5));
        spend.load(&[("claude-haiku-4-5".into(), usage, 2), ("llama3.2".into(), usage, 1)]);
        assert_eq!((spend.session(), spend.last_request()), (Some(1.0), None));
    }
}
