//! `/report`: the session held, written as the HTML report beside the database, its path
//! answered.

use super::Worker;

impl Worker {
    /// Write the report of the session held; the file's path, or why it could not be written.
    pub(super) fn write_report(&mut self) -> Result<String, String> {
        let store = self.place.store();
        let root = self.place.root().display().to_string();
        let pricing = self.spend.pricing().clone();
        let gathered = crate::report::Gathered {
            store,
            session: self.session.info(),
            project_root: &root,
            pricing: &pricing,
            redactor: self.session.redactor(),
            chars_per_token: self.place.config().context.chars_per_token,
            quarantine: &crate::memory::quarantine,
        };
        let report =
            crate::report::gather_session(&gathered).map_err(|e| format!("could not read the session: {e}"))?;
        let html = crate::report::render_session(&report);
        // Reports live in the data folder, beside `truncations/`.
        let data = self.place.truncations_dir().parent().unwrap_or(self.place.truncations_dir());
        let path = crate::report::default_path(data, &format!("session-{}", self.session.id()));
        crate::report::write_file(&path, &html).map_err(|e| format!("could not write {}: {e}", path.display()))?;
        Ok(path.display().to_string())
    }
}
