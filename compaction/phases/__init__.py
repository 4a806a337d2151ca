"""The five phases, one module each; every phase is a function returning a PhaseResult."""
