//! fio's normal output format.
