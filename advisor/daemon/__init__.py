"""The advisor daemon: configuration, policy host, state store, schedules, endpoint, twin."""
