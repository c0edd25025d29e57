"""Permissions: rules, the allow/ask/deny policy, the gate and the Approver protocol."""

from __future__ import annotations

from reasonix_core.permission.approver import (
    ApprovalDecision,
    ApprovalRequest,
    Approver,
    FailClosedApprover,
    Question,
    QuestionAnswer,
)
from reasonix_core.permission.gate import Authorization, PermissionGate
from reasonix_core.permission.policy import Decision, Policy, Verdict, explain
from reasonix_core.permission.rules import Rule, RuleError, parse_rule, parse_rules, split_rules

__all__ = [
    "ApprovalDecision",
    "ApprovalRequest",
    "Approver",
    "Authorization",
    "Decision",
    "FailClosedApprover",
    "PermissionGate",
    "Policy",
    "Question",
    "QuestionAnswer",
    "Rule",
    "RuleError",
    "Verdict",
    "explain",
    "parse_rule",
    "parse_rules",
    "split_rules",
]
