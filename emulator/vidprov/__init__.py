"""The video provider's tasks and the registry that finds them by any of their ids."""
