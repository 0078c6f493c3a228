"""toy-guess: peek at a number, then answer it. The smallest env there is."""
