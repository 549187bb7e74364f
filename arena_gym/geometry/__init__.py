"""Geometry the whole package shares, at the bottom of its layers (imports nothing of ours
but the compiled-function machinery): the array namespace helpers every shared definition
is written with."""
