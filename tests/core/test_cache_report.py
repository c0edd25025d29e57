

def test_saved_gauges_are_the_last_own_request_and_the_session_totals():
    """Issue 30 item 7: a resumed session's gauges, one owner (the cache report)."""
    from reasonix_core.agent.cache_report import build_report

    report = build_report(
        "s",
        [
            {"request": 1, "prompt_tokens": 1000, "cache_hit_tokens": 0,
             "completion_tokens": 100, "cost": 0.1},
            {"request": 2, "prompt_tokens": 2000, "cache_hit_tokens": 1000,
             "completion_tokens": 50, "cost": 0.2, "estimated": True},
            {"request": 3, "source": "compaction", "prompt_tokens": 5000,
             "cache_hit_tokens": 0, "completion_tokens": 300, "cost": 0.3},
            {"request": 4, "agent_path": ["child"], "prompt_tokens": 9000,
             "cache_hit_tokens": 0, "completion_tokens": 1, "cost": 0.4},
        ],
    )  # fmt: skip
    gauges = report.gauges()
    assert gauges is not None
    assert gauges.context_tokens == 2050 and gauges.last_cache_pct == 50
    assert (gauges.cache_hit_tokens, gauges.prompt_tokens) == (1000, 8000)
    assert round(gauges.cost, 6) == 1.0 and gauges.estimated
    assert build_report("s", []).gauges() is None
