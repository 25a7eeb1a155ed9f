//! fio's terse output format.
