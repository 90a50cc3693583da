//! The kernel language front end (being built): text → [`crate::workload::Workload`].
