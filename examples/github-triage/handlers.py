"""A pull request is opened: comment on it with a checklist for its author."""

from autokitteh.github import github_client

CHECKLIST = ("tests for the change", "docs for what a user sees", "a line in the changelog")


def on_pr_opened(event):
    pr = event.data.pull_request
    repo = github_client("github_conn").get_repo(event.data.repository.full_name)
    comment = repo.get_issue(pr.number).create_comment(checklist(pr))
    print(f"commented on #{pr.number}: {comment.html_url}")


def checklist(pr):
    lines = [f"Thanks @{pr.user.login}! Before review, please check:"]
    lines += [f"- [ ] {item}" for item in CHECKLIST]
    if pr.draft:
        lines.append("(This is a draft: mark it ready when it is.)")
    return "\n".join(lines)
