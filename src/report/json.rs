//! fio's json output format.
