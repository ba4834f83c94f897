"""run_parallel keeps task order whether it runs in processes or inline."""

from advisor.lab.parallel import run_parallel


def _square_after_wait(n: int) -> int:
    import time

    time.sleep(0.01 * (5 - n))  # later tasks finish first
    return n * n


def test_results_come_back_in_task_order_from_processes() -> None:
    assert run_parallel(_square_after_wait, [0, 1, 2, 3, 4], workers=2, progress=False) == [
        0,
        1,
        4,
        9,
        16,
    ]


def test_one_worker_runs_inline() -> None:
    seen: list[int] = []
    run_parallel(seen.append, [3, 1, 2], workers=1, progress=False)
    assert seen == [3, 1, 2]
