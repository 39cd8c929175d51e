//! Logical optimizer rules cqldb adds to DataFusion's, one per file.

pub mod narrow_join_by_cql;
