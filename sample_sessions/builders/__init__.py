"""Story builders for the sample sessions; each module writes one or two conversations."""
