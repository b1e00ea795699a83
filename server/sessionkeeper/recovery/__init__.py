"""The recovery contract: baseline, restorable subsystems, lifecycle hooks and the resume verdict."""
