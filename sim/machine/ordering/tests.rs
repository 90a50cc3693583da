//! Unit tests of the ordering rules, one or more per row of the table.
