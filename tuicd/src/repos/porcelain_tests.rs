use super::*;

const OID: &str = "4e7df5ca1b42fe7695e359564f808132a786d80a";
const Z: &str = "0000000000000000000000000000000000000000";

/// Recorded from git 2.47: a rename of a name with spaces, a modified file, a new file whose name
/// holds a newline, a submodule with modified content, an untracked file, on branch main.
fn recorded_status() -> Vec<u8> {
    let records = [
        format!("# branch.oid {OID}"),
        "# branch.head main".to_owned(),
        "# branch.upstream origin/main".to_owned(),
        "# branch.ab +2 -1".to_owned(),
        format!("1 .M N... 100644 100644 100644 {OID} {OID} keep.txt"),
        format!("2 R. N... 100644 100644 100644 {OID} {OID} R100 new name.txt"),
        "old name.txt".to_owned(),
        format!("1 A. N... 000000 100644 100644 {Z} {OID} line\nbreak.txt"),
        format!("1 AM S.M. 000000 160000 160000 {Z} {OID} sub"),
        format!("u UU N... 100644 100644 100644 100644 {OID} {OID} {OID} both edited.rs"),
        "? new dir/untracked file.txt".to_owned(),
        "! target/".to_owned(),
    ];
    let mut bytes = Vec::new();
    for r in records {
        bytes.extend_from_slice(r.as_bytes());
        bytes.push(0);
    }
    bytes
}

#[test]
fn status_reads_renames_spaces_newlines_submodules_and_conflicts() {
    let status = parse_status(&recorded_status());
    assert_eq!(
        status.branch,
        BranchHeader {
            head_oid: Some(OID.into()),
            branch: Some("main".into()),
            detached: false,
            unborn: false,
            upstream: Some("origin/main".into()),
            ahead: Some(2),
            behind: Some(1),
        }
    );
    let paths: Vec<(&str, &str)> = status.files.iter().map(|f| (f.path.as_str(), f.kind)).collect();
    assert_eq!(
        paths,
        vec![
            ("keep.txt", "modified"),
            ("new name.txt", "renamed"),
            ("line\nbreak.txt", "added"),
            ("sub", "added"),
            ("both edited.rs", "conflicted"),
            ("new dir/untracked file.txt", "untracked"),
            ("target/", "ignored"),
        ]
    );
    assert_eq!(status.files[1].orig_path.as_deref(), Some("old name.txt"));
    assert!(status.files[3].submodule && !status.files[0].submodule);
    assert_eq!(status.counts(), DirtyCounts { staged: 3, unstaged: 2, untracked: 1, conflicted: 1 });
}

#[test]
fn a_detached_head_and_an_unborn_branch_are_told_apart() {
    let detached = parse_status(format!("# branch.oid {OID}\0# branch.head (detached)\0").as_bytes());
    assert!(detached.branch.detached && detached.branch.branch.is_none());
    assert_eq!(detached.branch.head_oid.as_deref(), Some(OID));
    let unborn = parse_status(b"# branch.oid (initial)\0# branch.head main\0? a\0");
    assert!(unborn.branch.unborn && !unborn.branch.detached);
    assert_eq!(unborn.branch.branch.as_deref(), Some("main"));
    assert_eq!(unborn.branch.head_oid, None);
    assert_eq!(unborn.counts().untracked, 1);
}

#[test]
fn a_status_cut_off_mid_record_keeps_the_whole_records() {
    let bytes = recorded_status();
    // Cut inside the rename's original path: the rename is dropped, nothing before it.
    let cut = bytes.windows(4).position(|w| w == b"old ").unwrap() + 2;
    let status = parse_status(&bytes[..cut]);
    let paths: Vec<&str> = status.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, vec!["keep.txt"]);
    assert!(parse_status(b"").files.is_empty());
}

#[test]
fn numstat_reads_renames_binaries_and_odd_names() {
    let bytes = b"3\t0\t.gitmodules\x001\t0\tkeep.txt\x000\t0\t\x00old name.txt\x00new name.txt\x00-\t-\timg.png\x002\t1\tline\nbreak\x00";
    let stats = parse_numstat(bytes);
    assert_eq!(stats.len(), 5);
    assert_eq!(stats[2].path, "new name.txt");
    assert_eq!(stats[2].orig_path.as_deref(), Some("old name.txt"));
    assert!(stats[3].binary && stats[3].additions.is_none());
    assert_eq!((stats[4].path.as_str(), stats[4].additions, stats[4].deletions), ("line\nbreak", Some(2), Some(1)));
}

#[test]
fn branches_name_locals_remotes_and_the_current_one() {
    let bytes = format!(
        "refs/heads/main\0{OID}\0origin/main\0*\01796149076\nrefs/heads/feature/x\0{OID}\0\0 \01796149000\n\
         refs/remotes/origin/HEAD\0{OID}\0\0 \01\nrefs/remotes/origin/main\0{OID}\0\0 \01796149076\n"
    );
    let branches = parse_branches(bytes.as_bytes());
    let names: Vec<(&str, bool, bool)> = branches.iter().map(|b| (b.name.as_str(), b.remote, b.current)).collect();
    assert_eq!(names, vec![("main", false, true), ("feature/x", false, false), ("origin/main", true, false)]);
    assert_eq!(branches[0].upstream.as_deref(), Some("origin/main"));
    assert_eq!(branches[1].upstream, None);
    assert_eq!(branches[0].committed_at, Some(1_796_149_076));
}

#[test]
fn worktree_list_reads_main_linked_detached_and_prunable_entries() {
    let bytes = format!(
        "worktree /r\0HEAD {OID}\0branch refs/heads/main\0\0worktree /r__wt/feat x\0HEAD {OID}\0branch refs/heads/feat x\0locked\0\0\
         worktree /r__wt/d\0HEAD {OID}\0detached\0prunable gitdir file points to non-existent location\0\0"
    );
    let list = parse_worktrees(bytes.as_bytes());
    assert_eq!(list.len(), 3);
    assert_eq!(list[0].branch.as_deref(), Some("main"));
    assert_eq!(list[1].path, "/r__wt/feat x");
    assert!(list[1].locked);
    assert!(list[2].detached && list[2].prunable && list[2].branch.is_none());
}
