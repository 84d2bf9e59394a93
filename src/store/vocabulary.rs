//! cairn's own words in SQLite columns: modes, providers, memory kinds and retention classes
//! are stored as their names and read back as types. A name no version of cairn wrote is a
//! corrupt row, reported, never guessed at.

use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSql, ToSqlOutput, ValueRef};

use crate::config::ProviderKind;
use crate::conversation::{MemoryKind, Mode, RetentionClass};

fn named<T>(value: ValueRef<'_>, what: &str, parse: impl Fn(&str) -> Option<T>) -> FromSqlResult<T> {
    let name = value.as_str()?;
    parse(name).ok_or_else(|| FromSqlError::Other(format!("unknown {what} {name:?}").into()))
}

impl ToSql for Mode {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(self.as_str().into())
    }
}

impl FromSql for Mode {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        named(value, "mode", Mode::parse)
    }
}

impl ToSql for ProviderKind {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(self.as_str().into())
    }
}

impl FromSql for ProviderKind {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        use clap::ValueEnum;
        named(value, "provider", |s| ProviderKind::value_variants().iter().copied().find(|k| k.as_str() == s))
    }
}

impl ToSql for MemoryKind {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(self.as_str().into())
    }
}

impl FromSql for MemoryKind {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        named(value, "memory type", MemoryKind::parse)
    }
}

impl ToSql for RetentionClass {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(self.as_str().into())
    }
}

impl FromSql for RetentionClass {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        named(value, "memory class", RetentionClass::parse)
    }
}
