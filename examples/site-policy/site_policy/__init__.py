"""An example site policy for htcondor-advisor (docs/writing-a-policy.md)."""
