use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use super::key::TableKey;
use super::*;
use crate::puzzles::sliding::Geometry;
use crate::puzzles::sliding::pdb::PartitionKind;

const G2X4: Geometry = Geometry { rows: 2, cols: 4 };

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("puzzled-tables-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The 2×4 goal with the tiles rotated by `shift`: another exact table each.
fn goal(shift: u8) -> Vec<u8> {
    (0..8).map(|t| (t + shift) % 8).collect()
}

fn wait_ready(store: &TableStore, layout: &Layout) {
    let deadline = Instant::now() + std::time::Duration::from_secs(30);
    while !store.is_ready(layout) {
        assert!(Instant::now() < deadline, "{} never built", layout.name());
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

#[test]
fn past_the_caps_the_least_recently_used_table_goes_but_jobs_keep_theirs() {
    let dir = scratch("evict");
    let limits = TableLimits {
        max_tables: 2,
        ..TableLimits::default()
    };
    let store = Arc::new(TableStore::managed(Some(dir.clone()), limits));
    let _builder = store.start_builder().expect("thread");
    let layouts: Vec<Layout> = (0..3).map(|s| Layout::exact(G2X4, &goal(s))).collect();
    for layout in &layouts[..2] {
        assert_eq!(store.request(layout), LayoutState::Queued);
        wait_ready(store.as_ref(), layout);
    }
    // A job holds the first table; the second is used after it, so the first is the
    // least recently used.
    let held = store.exact(G2X4, &goal(0)).expect("ready");
    store.exact(G2X4, &goal(1)).expect("ready");
    assert_eq!(store.request(&layouts[2]), LayoutState::Queued);
    wait_ready(store.as_ref(), &layouts[2]);
    // Memory and disk keep two: the first is gone from both.
    let status = store.status();
    assert_eq!((status.memory_tables, status.disk_tables), (2, 2));
    assert!(!store.is_ready(&layouts[0]));
    assert!(matches!(
        store.exact(G2X4, &goal(0)),
        Err(TableError::NotReady)
    ));
    assert_eq!(
        std::fs::read_dir(&dir).expect("dir").count(),
        2,
        "one file evicted"
    );
    // The job's copy lives on until it lets go.
    assert_eq!(held.distance(&goal(0)), Some(0));
    // Bytes count too: a cap below two tables keeps one.
    let small = TableStore::managed(
        Some(dir.clone()),
        TableLimits {
            max_disk_bytes: 50_000,
            ..TableLimits::default()
        },
    );
    assert_eq!(small.status().disk_tables, 1, "40,320 bytes a table");
    store.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn only_cheap_or_allowed_layouts_are_built_and_named_ones_are_pinned() {
    let g4 = Geometry { rows: 4, cols: 4 };
    let store = TableStore::managed(None, TableLimits::default());
    let seven_eight = Layout::Partition {
        geometry: g4,
        kind: PartitionKind::SevenEight,
        blank: 3,
    };
    assert_eq!(
        store.request(&seven_eight),
        LayoutState::Refused(Refusal::NotAllowed)
    );
    let six_six_three = Layout::Partition {
        geometry: g4,
        kind: PartitionKind::SixSixThree,
        blank: 3,
    };
    assert!(six_six_three.is_cheap());
    assert_eq!(store.request(&six_six_three), LayoutState::Queued);
    assert_eq!(store.request(&six_six_three), LayoutState::Queued, "once");
    let status = store.status();
    assert_eq!(status.queued, vec!["4x4:6-6-3:blank=3".to_string()]);
    assert_eq!(
        status.refused,
        vec![("4x4:7-8:blank=3".to_string(), "not-allowed")]
    );
    // Allowed, but over the build budget.
    let rule: LayoutRule = "4x4:7-8:any".parse().expect("rule");
    let allowed = TableStore::managed(
        None,
        TableLimits {
            allowed: vec![rule],
            ..TableLimits::default()
        },
    );
    assert_eq!(
        allowed.request(&seven_eight),
        LayoutState::Refused(Refusal::OverBudget)
    );
    let rule: LayoutRule = "4x4:7-8".parse().expect("rule");
    assert_eq!(
        rule.layout().map(|l| l.name()).as_deref(),
        Some("4x4:7-8:blank-last")
    );
    assert!("4x4:6-6-6-6".parse::<LayoutRule>().is_err());
    assert!("4x4:7-8:blank=16".parse::<LayoutRule>().is_err());
    assert_eq!(
        "5x5:6-6-6-6:blank-first"
            .parse::<LayoutRule>()
            .map(|r| r.blank),
        Ok(Some(0))
    );
}

#[test]
fn a_build_under_way_stops_at_shutdown_and_leaves_nothing() {
    let dir = scratch("stop");
    let store = Arc::new(TableStore::managed(
        Some(dir.clone()),
        TableLimits::default(),
    ));
    let builder = store.start_builder().expect("thread");
    // Blank-first 4×4 6-6-3: seconds of work for the two 6-tile tables.
    let layout = Layout::Partition {
        geometry: Geometry { rows: 4, cols: 4 },
        kind: PartitionKind::SixSixThree,
        blank: 0,
    };
    assert_eq!(store.request(&layout), LayoutState::Queued);
    let deadline = Instant::now() + std::time::Duration::from_secs(10);
    while store.status().building.is_empty() {
        assert!(Instant::now() < deadline, "the build never started");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let stopping = Instant::now();
    store.shutdown();
    builder.join().expect("builder ends");
    assert!(
        stopping.elapsed() < std::time::Duration::from_secs(1),
        "stopped in {:?}",
        stopping.elapsed()
    );
    assert!(!store.is_ready(&layout));
    assert!(store.status().building.is_empty());
    assert_eq!(
        store.request(&layout),
        LayoutState::Refused(Refusal::QueueFull),
        "nothing is queued once stopped"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn metrics_name_where_tables_are_held_how_builds_stand_and_why_layouts_are_refused() {
    let dir = scratch("metrics");
    let command_line = TableStore::new(Some(dir.clone()));
    for shift in 0..3 {
        command_line.exact(G2X4, &goal(shift)).expect("built");
    }
    let recorder = metrics_exporter_prometheus::PrometheusBuilder::new().build_recorder();
    let handle = recorder.handle();
    metrics::with_local_recorder(&recorder, || {
        // Three files past a cap of two: one goes from disk. Two tables past a cap of
        // one table's bytes: the first goes from memory.
        let limits = TableLimits {
            max_tables: 2,
            max_memory_bytes: 50_000,
            ..TableLimits::default()
        };
        let store = TableStore::managed(Some(dir.clone()), limits);
        let kept: Vec<u8> = (0..3)
            .filter(|&s| store.is_ready(&Layout::exact(G2X4, &goal(s))))
            .collect();
        assert_eq!(kept.len(), 2);
        for &shift in &kept {
            store.exact(G2X4, &goal(shift)).expect("loaded");
        }
        let seven_eight = Layout::Partition {
            geometry: Geometry { rows: 4, cols: 4 },
            kind: PartitionKind::SevenEight,
            blank: 15,
        };
        assert_eq!(
            store.request(&seven_eight),
            LayoutState::Refused(Refusal::NotAllowed)
        );
        store.publish_counts();
    });
    let text = handle.render();
    for series in [
        r#"puzzled_tables_held{where="memory"} 1"#,
        r#"puzzled_tables_held{where="disk"} 2"#,
        r#"puzzled_table_bytes{where="memory"} "#,
        r#"puzzled_table_bytes{where="disk"} "#,
        r#"puzzled_table_builds{state="queued"} 0"#,
        r#"puzzled_table_builds{state="building"} 0"#,
        r#"puzzled_table_evictions_total{where="memory"} 1"#,
        r#"puzzled_table_evictions_total{where="disk"} 1"#,
        r#"puzzled_table_refusals_total{reason="not-allowed"} 1"#,
    ] {
        assert!(text.contains(series), "{series} missing from:\n{text}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn names_read_back_as_they_are_written() {
    let g3 = Geometry { rows: 3, cols: 3 };
    let g4 = Geometry { rows: 4, cols: 4 };
    let solved = [1, 2, 3, 4, 5, 6, 7, 8, 0];
    for (key, file) in [
        (TableKey::pattern(g4, &[1, 2, 3]), "pdb-4x4-1.2.3"),
        (TableKey::exact(g3, &solved), "exact-3x3-1.2.3.4.5.6.7.8.0"),
    ] {
        assert_eq!(key.name(), file);
        assert_eq!(TableKey::parse(file), Some(key));
    }
    assert_eq!(
        TableKey::parse("exact-3x3-1.2.3"),
        None,
        "a goal names every cell"
    );
    assert_eq!(
        TableKey::parse("pdb-4x4-16"),
        None,
        "cells lie on the board"
    );
    let partition = |kind, blank| Layout::Partition {
        geometry: g4,
        kind,
        blank,
    };
    for (layout, name) in [
        (
            partition(PartitionKind::SevenEight, 15),
            "4x4:7-8:blank-last",
        ),
        (
            partition(PartitionKind::SixSixThree, 0),
            "4x4:6-6-3:blank-first",
        ),
        (
            partition(PartitionKind::SixSixThree, 5),
            "4x4:6-6-3:blank=5",
        ),
        (Layout::exact(g3, &solved), "3x3:exact:1.2.3.4.5.6.7.8.0"),
    ] {
        assert_eq!(layout.name(), name);
    }
    for rule in [
        "4x4:7-8:blank-last",
        "4x4:6-6-3:blank-first",
        "4x4:6-6-3:blank=5",
        "5x5:6-6-6-6:any",
    ] {
        let parsed: LayoutRule = rule.parse().expect("a rule");
        assert_eq!(parsed.to_string(), rule);
        assert_eq!(
            parsed.layout().map(|l| l.name()),
            (!rule.ends_with("any")).then(|| rule.to_string())
        );
    }
}
