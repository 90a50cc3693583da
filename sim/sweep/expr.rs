//! Arithmetic over result columns, for chart axes: `kernel.cycles / atomics.l2.lane_operations`,
//! `T * 4 / kernel.cycles`, `(l2.reads + l2.writes) / 1000`.
//!
//! Grammar: `expr = term (('+' | '-') term)*`, `term = factor (('*' | '/') factor)*`,
//! `factor = number | column | '(' expr ')' | '-' factor`. A column is a parameter (`T`, `l2.slices`,
//! `seed`), a statistic `location.metric`, or a reported quantity `report.NAME`: letters, digits, `_`
//! and `.`, starting with a letter or `_`. Evaluation of a row yields `None` when a column is missing
//! or not a number, or on division by zero, so the row is left out of the chart instead of drawn as 0.

use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Num(f64),
    Col(String),
    Neg(Box<Expr>),
    Bin(Box<Expr>, Op, Box<Expr>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Add,
    Sub,
    Mul,
    Div,
}

/// A syntax error: the 1-based character column in the expression and what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExprError {
    pub col: usize,
    pub message: String,
}

impl fmt::Display for ExprError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "column {}: {}", self.col, self.message)
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(f64),
    Name(String),
    Sym(char),
}

fn lex(s: &str) -> Result<Vec<(usize, Tok)>, ExprError> {
    let cs: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < cs.len() {
        let c = cs[i];
        let start = i;
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit()
            || (c == '.' && cs.get(i + 1).is_some_and(|d| d.is_ascii_digit()))
        {
            while i < cs.len()
                && (cs[i].is_ascii_digit()
                    || cs[i] == '.'
                    || ((cs[i] == 'e' || cs[i] == 'E') && i + 1 < cs.len())
                    || ((cs[i] == '+' || cs[i] == '-') && matches!(cs[i - 1], 'e' | 'E')))
            {
                i += 1;
            }
            let text: String = cs[start..i].iter().collect();
            let v = text.parse::<f64>().map_err(|_| ExprError {
                col: start + 1,
                message: format!("`{text}` is not a number"),
            })?;
            out.push((start + 1, Tok::Num(v)));
        } else if c.is_ascii_alphabetic() || c == '_' {
            while i < cs.len() && (cs[i].is_ascii_alphanumeric() || cs[i] == '_' || cs[i] == '.') {
                i += 1;
            }
            let name: String = cs[start..i].iter().collect();
            if name.ends_with('.') {
                return Err(ExprError {
                    col: i,
                    message: format!("column name `{name}` ends with `.`"),
                });
            }
            out.push((start + 1, Tok::Name(name)));
        } else if "+-*/()".contains(c) {
            out.push((start + 1, Tok::Sym(c)));
            i += 1;
        } else {
            return Err(ExprError {
                col: start + 1,
                message: format!(
                    "unexpected `{c}` (allowed: numbers, column names, + - * / and parentheses)"
                ),
            });
        }
    }
    Ok(out)
}

/// Deepest nesting of an expression: parentheses, unary minus and each operator of a chain
/// (`a + b + c` nests its additions). Evaluation and drop recurse over the tree, so a deeper one
/// (a 20 000-deep expression overflowed the stack) is a syntax error.
pub const MAX_DEPTH: usize = 128;

struct Parser {
    toks: Vec<(usize, Tok)>,
    pos: usize,
    end: usize,
    depth: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.1)
    }
    fn col(&self) -> usize {
        self.toks.get(self.pos).map(|t| t.0).unwrap_or(self.end)
    }
    fn err<T>(&self, message: &str) -> Result<T, ExprError> {
        Err(ExprError {
            col: self.col(),
            message: message.to_string(),
        })
    }
    /// One level deeper, for the rest of the enclosing expression.
    fn deeper(&mut self) -> Result<(), ExprError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return self.err(&format!(
                "expression nested more than {MAX_DEPTH} levels deep (parentheses, unary minus \
                 and each operator of a chain count)"
            ));
        }
        Ok(())
    }
    fn expr(&mut self) -> Result<Expr, ExprError> {
        let outer = self.depth;
        let mut e = self.term()?;
        while let Some(Tok::Sym(c @ ('+' | '-'))) = self.peek() {
            let op = if *c == '+' { Op::Add } else { Op::Sub };
            self.deeper()?;
            self.pos += 1;
            e = Expr::Bin(Box::new(e), op, Box::new(self.term()?));
        }
        self.depth = outer;
        Ok(e)
    }
    fn term(&mut self) -> Result<Expr, ExprError> {
        let outer = self.depth;
        let mut e = self.factor()?;
        while let Some(Tok::Sym(c @ ('*' | '/'))) = self.peek() {
            let op = if *c == '*' { Op::Mul } else { Op::Div };
            self.deeper()?;
            self.pos += 1;
            e = Expr::Bin(Box::new(e), op, Box::new(self.factor()?));
        }
        self.depth = outer;
        Ok(e)
    }
    fn factor(&mut self) -> Result<Expr, ExprError> {
        let outer = self.depth;
        let e = self.factor_inner();
        self.depth = outer;
        e
    }
    fn factor_inner(&mut self) -> Result<Expr, ExprError> {
        if matches!(self.peek(), Some(Tok::Sym('-' | '('))) {
            self.deeper()?;
        }
        match self.peek().cloned() {
            Some(Tok::Num(v)) => {
                self.pos += 1;
                Ok(Expr::Num(v))
            }
            Some(Tok::Name(n)) => {
                self.pos += 1;
                Ok(Expr::Col(n))
            }
            Some(Tok::Sym('-')) => {
                self.pos += 1;
                Ok(Expr::Neg(Box::new(self.factor()?)))
            }
            Some(Tok::Sym('(')) => {
                self.pos += 1;
                let e = self.expr()?;
                if self.peek() != Some(&Tok::Sym(')')) {
                    return self.err("expected `)`");
                }
                self.pos += 1;
                Ok(e)
            }
            Some(_) => self.err("expected a number, a column name or `(`"),
            None => self.err("expression ends too early"),
        }
    }
}

impl Expr {
    pub fn parse(s: &str) -> Result<Expr, ExprError> {
        let toks = lex(s)?;
        let mut p = Parser {
            toks,
            pos: 0,
            end: s.chars().count() + 1,
            depth: 0,
        };
        let e = p.expr()?;
        if p.pos < p.toks.len() {
            return p.err("expected an operator (+ - * /)");
        }
        Ok(e)
    }

    /// The columns the expression reads, in order of first use.
    pub fn columns(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.collect(&mut out);
        out
    }

    fn collect<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            Expr::Num(_) => {}
            Expr::Col(c) => {
                if !out.contains(&c.as_str()) {
                    out.push(c)
                }
            }
            Expr::Neg(e) => e.collect(out),
            Expr::Bin(a, _, b) => {
                a.collect(out);
                b.collect(out);
            }
        }
    }

    /// The single column this expression is, if it is just one.
    pub fn as_column(&self) -> Option<&str> {
        match self {
            Expr::Col(c) => Some(c),
            _ => None,
        }
    }

    pub fn eval(&self, col: &dyn Fn(&str) -> Option<f64>) -> Option<f64> {
        let v = match self {
            Expr::Num(v) => *v,
            Expr::Col(c) => col(c)?,
            Expr::Neg(e) => -e.eval(col)?,
            Expr::Bin(a, op, b) => {
                let (a, b) = (a.eval(col)?, b.eval(col)?);
                match op {
                    Op::Add => a + b,
                    Op::Sub => a - b,
                    Op::Mul => a * b,
                    Op::Div if b == 0.0 => return None,
                    Op::Div => a / b,
                }
            }
        };
        v.is_finite().then_some(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(c: &str) -> Option<f64> {
        match c {
            "kernel.cycles" => Some(1000.0),
            "T" => Some(4.0),
            "atomics.l2.lane_operations" => Some(0.0),
            _ => None,
        }
    }

    #[test]
    fn precedence_and_parentheses_follow_arithmetic() {
        let e = Expr::parse("kernel.cycles / T * 2 - -(1 + 1)").unwrap();
        assert_eq!(e.eval(&row), Some(502.0));
        assert_eq!(e.columns(), vec!["kernel.cycles", "T"]);
        assert_eq!(Expr::parse("1.5e3 / T").unwrap().eval(&row), Some(375.0));
        let deep = format!("{}T{}", "(".repeat(100), ")".repeat(100));
        assert_eq!(Expr::parse(&deep).unwrap().eval(&row), Some(4.0));
    }

    #[test]
    fn missing_columns_and_division_by_zero_leave_the_row_out() {
        let div0 = Expr::parse("kernel.cycles / atomics.l2.lane_operations").unwrap();
        assert_eq!(div0.eval(&row), None);
        assert_eq!(Expr::parse("nope + 1").unwrap().eval(&row), None);
    }

    #[test]
    fn syntax_errors_name_the_column() {
        let cases = [
            ("kernel.cycles /", 16, "ends too early"),
            ("(T + 1", 7, "expected `)`"),
            ("T T", 3, "expected an operator"),
            ("T $ 2", 3, "unexpected `$`"),
            ("sm.", 3, "ends with `.`"),
            (
                &format!("{}1{}", "(".repeat(20_000), ")".repeat(20_000)),
                129,
                "nested more than 128",
            ),
            (
                &format!("{}T", "-".repeat(20_000)),
                129,
                "nested more than 128",
            ),
            (&vec!["T"; 200_000].join("+"), 258, "nested more than 128"),
        ];
        for (text, col, msg) in cases {
            let e = Expr::parse(text).unwrap_err();
            let text = &text[..text.len().min(40)];
            assert_eq!(e.col, col, "{text}: {e}");
            assert!(e.message.contains(msg), "{text}: {e}");
        }
    }
}
