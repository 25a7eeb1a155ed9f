//! One file per ioengine behind one trait.
