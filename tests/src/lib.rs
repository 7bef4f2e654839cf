//! Ogham's test harness. TODO(harness helper).
