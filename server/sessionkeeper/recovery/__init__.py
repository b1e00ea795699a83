"""The recovery contract: baseline, restorable subsystems, lifecycle hooks and the resume verdict.

It may import agents (beside it), store and the vocabulary; never session, the Keeper or a surface.
"""
