"""The job engine: long-running work whose status is a function of the virtual clock."""
