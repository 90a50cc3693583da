//! What values a configuration key accepts ([`Kind`]) and the check of one value against its key
//! ([`Key::check`]): the type and range named in every error a user sees. The keys themselves are
//! the table in `keys.rs`.

use super::keys::Key;

/// What values a key accepts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    /// An integer in `min..=max`.
    Int {
        min: u64,
        max: u64,
    },
    /// A power of two in `min..=max`.
    Pow2 {
        min: u64,
        max: u64,
    },
    Bool,
    /// A non-empty string.
    Text,
    /// One of these names.
    Choice(&'static [&'static str]),
    /// A non-empty list of distinct names from this list.
    Set(&'static [&'static str]),
    /// A finite number (integer or decimal) in `min..=max`.
    Decimal {
        min: f64,
        max: f64,
    },
}

impl Kind {
    /// Type name for the reference and for "expected ..." messages.
    pub fn type_name(self) -> &'static str {
        match self {
            Kind::Int { .. } | Kind::Pow2 { .. } => "integer",
            Kind::Bool => "boolean",
            Kind::Text => "string",
            Kind::Choice(_) => "string (enum)",
            Kind::Set(_) => "array of strings",
            Kind::Decimal { .. } => "number",
        }
    }

    /// What is allowed, in words.
    pub fn allowed(self) -> String {
        match self {
            Kind::Int { min, max } => format!("{min} ..= {max}"),
            Kind::Pow2 { min, max } => format!("power of two, {min} ..= {max}"),
            Kind::Bool => "true, false".into(),
            Kind::Text => "non-empty".into(),
            Kind::Choice(names) => names.join(", "),
            Kind::Set(names) => format!("non-empty, distinct, from: {}", names.join(", ")),
            Kind::Decimal { min, max } => format!("{min} ..= {max}"),
        }
    }
}

impl Key {
    /// Checks one value against the key's kind and range; `Err` says what is allowed.
    pub fn check(&self, v: &toml::Value) -> Result<(), String> {
        let expected = || {
            format!(
                "expected {} ({})",
                self.kind.type_name(),
                self.kind.allowed()
            )
        };
        match self.kind {
            Kind::Int { min, max } | Kind::Pow2 { min, max } => {
                let toml::Value::Integer(i) = *v else {
                    return Err(expected());
                };
                if i < 0 || (i as u64) < min {
                    return Err(format!("must be at least {min}"));
                }
                if i as u64 > max {
                    return Err(format!("must be at most {max}"));
                }
                if matches!(self.kind, Kind::Pow2 { .. }) && !(i as u64).is_power_of_two() {
                    return Err(format!("must be a power of two ({})", self.kind.allowed()));
                }
                Ok(())
            }
            Kind::Decimal { min, max } => {
                let x = match *v {
                    toml::Value::Float(x) => x,
                    toml::Value::Integer(i) => i as f64,
                    _ => return Err(expected()),
                };
                if !x.is_finite() {
                    return Err(format!("must be a finite number ({})", self.kind.allowed()));
                }
                if x < min {
                    return Err(format!("must be at least {min}"));
                }
                if x > max {
                    return Err(format!("must be at most {max}"));
                }
                Ok(())
            }
            Kind::Bool => match v {
                toml::Value::Boolean(_) => Ok(()),
                _ => Err(expected()),
            },
            Kind::Text => match v {
                toml::Value::String(s) if !s.trim().is_empty() => Ok(()),
                toml::Value::String(_) => Err("must not be empty".into()),
                toml::Value::Datetime(_) => {
                    Err("expected a string, found a TOML date/time (put it in quotes)".into())
                }
                _ => Err(expected()),
            },
            Kind::Choice(names) => match v {
                toml::Value::String(s) if names.contains(&s.as_str()) => Ok(()),
                toml::Value::String(_) => Err(format!("must be one of: {}", names.join(", "))),
                _ => Err(expected()),
            },
            Kind::Set(names) => {
                let toml::Value::Array(items) = v else {
                    return Err(expected());
                };
                if items.is_empty() {
                    return Err(format!("must not be empty (allowed: {})", names.join(", ")));
                }
                let mut seen: Vec<&str> = Vec::new();
                for item in items {
                    let toml::Value::String(s) = item else {
                        return Err(expected());
                    };
                    if !names.contains(&s.as_str()) {
                        return Err(format!("`{s}` is not one of: {}", names.join(", ")));
                    }
                    if seen.contains(&s.as_str()) {
                        return Err(format!("`{s}` is listed twice"));
                    }
                    seen.push(s);
                }
                Ok(())
            }
        }
    }
}
