//! fio and Kubernetes/Go unit grammars: sizes, times, percentages.
