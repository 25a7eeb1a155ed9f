//! fio command line and INI job files → `RunSpec`.
