"""Sweeps: a grid of budgets over sessions, the savings/recall frontier, a recommendation.

grid.py parses and expands the parameter grid, worker.py compacts one point, run.py runs the
grid (in parallel) and aggregates it, frontier.py finds the Pareto frontier and recommends, and
cost.py estimates what an LLM sweep would cost before anything is sent.
"""
