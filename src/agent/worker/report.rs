//! `/report`: the session held, written as the HTML report beside the database, its path
//! answered; `/export`: the conversation as a readable file, the same way.

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

    /// Write the session held as a readable file: to `path` (relative to where cairn was
    /// started), else beside the reports; its path, or why it could not be written.
    pub(super) fn write_export(
        &mut self,
        format: crate::report::ExportFormat,
        path: Option<&str>,
    ) -> Result<String, String> {
        if self.session.last_seq() == 0 {
            return Err("nothing to export yet: the session has no messages".into());
        }
        let root = self.place.root().display().to_string();
        let transcript =
            crate::report::gather_transcript(self.place.store(), self.session.info(), &root, self.session.redactor())
                .map_err(|e| format!("could not read the session: {e}"))?;
        let text = format.render(&transcript);
        let path = match path {
            Some(p) => self.place.cwd().join(crate::config::expand_home(p)),
            None => {
                let data = self.place.truncations_dir().parent().unwrap_or(self.place.truncations_dir());
                crate::report::export_path(data, self.session.id(), format)
            }
        };
        crate::report::write_file(&path, &text).map_err(|e| format!("could not write {}: {e}", path.display()))?;
        Ok(path.display().to_string())
    }
}
