//! Translators from what users write into the job model: fio's command line and job files
//! (`fio/`), troubleshoot specs (`troubleshoot/`) and `check` profiles (`profiles/`). Every
//! translator produces the same `JobSpec`; nothing downstream knows where a job came from.

pub(crate) mod fio;
pub(crate) mod profiles;
pub(crate) mod suggest;
pub(crate) mod troubleshoot;
