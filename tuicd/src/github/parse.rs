//! Pure parsers from `gh`'s JSON (camelCase, GitHub's enums) into the snake_case shapes tuicd
//! answers. No IO; the fixture tests below are `gh` output as it prints it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `gh repo view --json nameWithOwner,url,defaultBranchRef,visibility,viewerPermission`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct RepoStatus {
    pub repo: String,
    pub url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_branch: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub visibility: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub viewer_permission: Option<String>,
}

/// Passed, failed and pending CI checks, counted from a `statusCheckRollup` or `gh pr checks`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub(crate) struct CheckSummary {
    pub passed: u32,
    pub failed: u32,
    pub pending: u32,
    pub total: u32,
}

/// One pull request, as `pr-statuses` and `repo action=prs` answer it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct PrStatus {
    pub number: u64,
    pub title: String,
    pub url: String,
    pub state: String,
    pub is_draft: bool,
    pub head: String,
    pub base: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub review_decision: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mergeable: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merged_at: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<String>,
    pub checks: CheckSummary,
}

/// One CI check of `gh pr checks --json name,state,bucket,link,workflow,description`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Check {
    pub name: String,
    pub state: String,
    /// gh's grouping: pass, fail, pending, skipping or cancel.
    pub bucket: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub link: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub workflow: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
}

/// One issue of `gh issue list --json number,title,url,state,author,labels,createdAt`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Issue {
    pub number: u64,
    pub title: String,
    pub url: String,
    pub state: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
}

/// What a create answers: the new item's URL and the number at its end.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Created {
    pub url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub number: Option<u64>,
}

fn text(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_owned)
}

fn login(v: &Value) -> Option<String> {
    v.get("author").and_then(|a| text(a, "login"))
}

fn labels(v: &Value) -> Vec<String> {
    let names = v.get("labels").and_then(Value::as_array).into_iter().flatten();
    names.filter_map(|l| text(l, "name")).collect()
}

fn parse_json(what: &str, stdout: &str) -> Result<Value, String> {
    serde_json::from_str(stdout).map_err(|e| format!("gh answered {what} that is not the JSON expected: {e}"))
}

fn array<'a>(what: &str, value: &'a Value) -> Result<&'a Vec<Value>, String> {
    value.as_array().ok_or_else(|| format!("gh answered {what} that is not a JSON array"))
}

pub(crate) fn repo_status(stdout: &str) -> Result<RepoStatus, String> {
    let v = parse_json("a repository", stdout)?;
    Ok(RepoStatus {
        repo: text(&v, "nameWithOwner").ok_or("gh answered a repository without nameWithOwner")?,
        url: text(&v, "url").unwrap_or_default(),
        default_branch: v.get("defaultBranchRef").and_then(|b| text(b, "name")),
        visibility: text(&v, "visibility"),
        viewer_permission: text(&v, "viewerPermission"),
    })
}

/// Counts one `statusCheckRollup`: check runs by status and conclusion, status contexts by state.
pub(crate) fn rollup(items: &[Value]) -> CheckSummary {
    let mut summary = CheckSummary::default();
    for item in items {
        let verdict = match item.get("__typename").and_then(Value::as_str) {
            Some("StatusContext") => match text(item, "state").as_deref() {
                Some("SUCCESS") => Verdict::Passed,
                Some("FAILURE" | "ERROR") => Verdict::Failed,
                _ => Verdict::Pending,
            },
            _ if text(item, "status").as_deref().is_some_and(|s| s != "COMPLETED") => Verdict::Pending,
            _ => match text(item, "conclusion").as_deref() {
                Some("SUCCESS" | "NEUTRAL" | "SKIPPED") => Verdict::Passed,
                Some(_) => Verdict::Failed,
                None => Verdict::Pending,
            },
        };
        summary.add(verdict);
    }
    summary
}

enum Verdict {
    Passed,
    Failed,
    Pending,
}

impl CheckSummary {
    fn add(&mut self, verdict: Verdict) {
        match verdict {
            Verdict::Passed => self.passed += 1,
            Verdict::Failed => self.failed += 1,
            Verdict::Pending => self.pending += 1,
        }
        self.total += 1;
    }
}

pub(crate) fn pr_list(stdout: &str) -> Result<Vec<PrStatus>, String> {
    let v = parse_json("a pull request list", stdout)?;
    let items = array("a pull request list", &v)?;
    items
        .iter()
        .map(|pr| {
            let rollup_items = pr.get("statusCheckRollup").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
            Ok(PrStatus {
                number: pr
                    .get("number")
                    .and_then(Value::as_u64)
                    .ok_or("gh answered a pull request without a number")?,
                title: text(pr, "title").unwrap_or_default(),
                url: text(pr, "url").unwrap_or_default(),
                state: text(pr, "state").unwrap_or_default(),
                is_draft: pr.get("isDraft").and_then(Value::as_bool).unwrap_or(false),
                head: text(pr, "headRefName").unwrap_or_default(),
                base: text(pr, "baseRefName").unwrap_or_default(),
                author: login(pr),
                review_decision: text(pr, "reviewDecision"),
                mergeable: text(pr, "mergeable"),
                merged_at: text(pr, "mergedAt"),
                labels: labels(pr),
                checks: rollup(rollup_items),
            })
        })
        .collect()
}

pub(crate) fn checks(stdout: &str) -> Result<(Vec<Check>, CheckSummary), String> {
    let checks: Vec<Check> =
        serde_json::from_str(stdout).map_err(|e| format!("gh answered checks that are not the JSON expected: {e}"))?;
    let mut summary = CheckSummary::default();
    for check in &checks {
        summary.add(match check.bucket.as_str() {
            "pass" | "skipping" => Verdict::Passed,
            "fail" | "cancel" => Verdict::Failed,
            _ => Verdict::Pending,
        });
    }
    Ok((checks, summary))
}

pub(crate) fn issue_list(stdout: &str) -> Result<Vec<Issue>, String> {
    let v = parse_json("an issue list", stdout)?;
    array("an issue list", &v)?
        .iter()
        .map(|issue| {
            Ok(Issue {
                number: issue.get("number").and_then(Value::as_u64).ok_or("gh answered an issue without a number")?,
                title: text(issue, "title").unwrap_or_default(),
                url: text(issue, "url").unwrap_or_default(),
                state: text(issue, "state").unwrap_or_default(),
                author: login(issue),
                labels: labels(issue),
                created_at: text(issue, "createdAt"),
            })
        })
        .collect()
}

/// `gh pr create` and `gh issue create` print the new item's URL as their last line.
pub(crate) fn created(stdout: &str) -> Result<Created, String> {
    let url = stdout
        .lines()
        .map(str::trim)
        .rfind(|l| l.starts_with("https://") || l.starts_with("http://"))
        .ok_or_else(|| format!("gh printed no URL for the created item: {}", stdout.trim()))?;
    let number = url.rsplit('/').next().and_then(|n| n.parse().ok());
    Ok(Created { url: url.to_owned(), number })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pull_request_list_with_every_kind_of_check() {
        let stdout = r#"[{"number":12,"title":"Fix it","url":"https://github.com/o/r/pull/12","state":"OPEN",
          "isDraft":true,"headRefName":"fix","baseRefName":"main","author":{"login":"ada","is_bot":false},
          "reviewDecision":"","mergeable":"MERGEABLE","labels":[{"name":"bug"}],
          "statusCheckRollup":[
            {"__typename":"CheckRun","name":"test","status":"COMPLETED","conclusion":"SUCCESS"},
            {"__typename":"CheckRun","name":"lint","status":"COMPLETED","conclusion":"FAILURE"},
            {"__typename":"CheckRun","name":"slow","status":"IN_PROGRESS","conclusion":""},
            {"__typename":"StatusContext","context":"ci/x","state":"PENDING"},
            {"__typename":"StatusContext","context":"ci/y","state":"SUCCESS"},
            {"__typename":"CheckRun","name":"skip","status":"COMPLETED","conclusion":"SKIPPED"}]}]"#;
        let prs = pr_list(stdout).unwrap();
        assert_eq!(prs.len(), 1);
        let pr = &prs[0];
        assert_eq!((pr.number, pr.head.as_str(), pr.base.as_str(), pr.is_draft), (12, "fix", "main", true));
        assert_eq!(pr.author.as_deref(), Some("ada"));
        assert_eq!(pr.review_decision, None, "an empty decision is omitted");
        assert_eq!(pr.labels, vec!["bug"]);
        assert_eq!(pr.checks, CheckSummary { passed: 3, failed: 1, pending: 2, total: 6 });
        let json = serde_json::to_value(pr).unwrap();
        assert!(json.get("merged_at").is_none() && json.get("review_decision").is_none(), "{json}");
    }

    #[test]
    fn checks_are_summarised_by_bucket() {
        let stdout = r#"[{"name":"a","state":"SUCCESS","bucket":"pass","link":"https://x/1","workflow":"CI"},
          {"name":"b","state":"FAILURE","bucket":"fail","link":"","workflow":""},
          {"name":"c","state":"IN_PROGRESS","bucket":"pending"},{"name":"d","state":"CANCELLED","bucket":"cancel"}]"#;
        let (list, summary) = checks(stdout).unwrap();
        assert_eq!(list.len(), 4);
        assert_eq!(summary, CheckSummary { passed: 1, failed: 2, pending: 1, total: 4 });
        assert!(serde_json::to_value(&list[1]).unwrap().get("link").is_none());
    }

    #[test]
    fn repository_issues_and_created_urls() {
        let repo = repo_status(r#"{"nameWithOwner":"o/r","url":"https://github.com/o/r","defaultBranchRef":{"name":"main"},"visibility":"PUBLIC","viewerPermission":"ADMIN"}"#).unwrap();
        assert_eq!((repo.repo.as_str(), repo.default_branch.as_deref()), ("o/r", Some("main")));
        let issues = issue_list(r#"[{"number":3,"title":"T","url":"u","state":"OPEN","author":{"login":"b"},"labels":[],"createdAt":"2026-01-01T00:00:00Z"}]"#).unwrap();
        assert_eq!((issues[0].number, issues[0].author.as_deref()), (3, Some("b")));
        let made =
            created("Creating pull request for fix into main in o/r\n\nhttps://github.com/o/r/pull/13\n").unwrap();
        assert_eq!((made.url.as_str(), made.number), ("https://github.com/o/r/pull/13", Some(13)));
        assert!(created("nothing useful").is_err());
        assert!(pr_list("not json").unwrap_err().contains("not the JSON expected"));
        assert!(issue_list("{}").unwrap_err().contains("not a JSON array"));
    }
}
