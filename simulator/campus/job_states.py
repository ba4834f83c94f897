"""The states of a job book's entries (job_book.py)."""

PENDING, QUEUED, RUNNING, DONE, REMOVED, HELD = range(6)
